using System;
using System.Collections.Concurrent;
using Microsoft.Extensions.Logging;

namespace Myriad.Hosting.Tests;

/// <summary>A logger provider that keeps every entry, for asserting what the hosting code logs.</summary>
internal sealed class LogCapture : ILoggerProvider
{
    internal ConcurrentQueue<(string Category, LogLevel Level, EventId Id, string Message, Exception? Exception)> Entries { get; } = new();

    public ILogger CreateLogger(string categoryName) => new Logger(this, categoryName);

    public void Dispose()
    {
    }

    private sealed class Logger(LogCapture owner, string category) : ILogger
    {
        public IDisposable? BeginScope<TState>(TState state)
            where TState : notnull => null;

        public bool IsEnabled(LogLevel logLevel) => true;

        public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter) =>
            owner.Entries.Enqueue((category, logLevel, eventId, formatter(state, exception), exception));
    }
}
