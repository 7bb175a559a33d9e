using System;
using Microsoft.Extensions.Logging;

namespace Myriad.Hosting;

/// <summary>The log messages of the hosting integration (category <see cref="Category"/>).</summary>
internal static class MyriadLog
{
    internal const string Category = "Myriad";

    private static readonly Action<ILogger, string, Exception?> s_unobserved = LoggerMessage.Define<string>(
        LogLevel.Error, new EventId(1, "UnobservedJobException"), "A detached job on runtime {Runtime} failed and nobody awaited it.");

    private static readonly Action<ILogger, string, Exception?> s_drainTimedOut = LoggerMessage.Define<string>(
        LogLevel.Warning, new EventId(2, "DrainTimedOut"), "Runtime {Runtime} did not drain its queued jobs within the host's shutdown timeout; the host stops waiting for it.");

    private static readonly Action<ILogger, string, Exception?> s_drained = LoggerMessage.Define<string>(
        LogLevel.Debug, new EventId(3, "Drained"), "Runtime {Runtime} drained and stopped.");

    private static readonly Action<ILogger, string, Exception?> s_drainNotAwaited = LoggerMessage.Define<string>(
        LogLevel.Warning, new EventId(4, "DrainNotAwaited"), "The host's shutdown timeout had expired before runtime {Runtime} was disposed; its queued jobs drain in the background.");

    internal static void DrainNotAwaited(ILogger logger, string runtime) => s_drainNotAwaited(logger, runtime, null);

    internal static void UnobservedException(ILogger logger, string runtime, Exception exception) => s_unobserved(logger, runtime, exception);

    internal static void DrainTimedOut(ILogger logger, string runtime) => s_drainTimedOut(logger, runtime, null);

    internal static void Drained(ILogger logger, string runtime) => s_drained(logger, runtime, null);
}
