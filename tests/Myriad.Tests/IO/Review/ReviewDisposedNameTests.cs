using System;
using System.Collections.Generic;
using System.IO;
using System.Net.Sockets;
using System.Threading;
using Myriad.IO;
using Myriad.Scheduling;
using Xunit;
using Xunit.Abstractions;

namespace Myriad.Tests.IO.Review;

/// <summary>
/// Review: docs/io.md promises that every operation failed by a disposal throws an
/// ObjectDisposedException naming the connection. An operation whose system call the disposal
/// overlaps can instead get the BCL Socket's own ObjectDisposedException (ObjectName
/// "System.Net.Sockets.Socket"): the sync Stream read (ReadBlocking) calls Socket.Poll after a
/// receive that would block, and Socket.Dispose marks the socket disposed before it waits for the
/// receive's handle reference to drop.
/// </summary>
public sealed class ReviewDisposedNameTests(ITestOutputHelper output)
{
    [Fact]
    public void Review_StreamRead_RacingDispose_ThrowsObjectDisposedNamingTheConnection()
    {
        if (!OperatingSystem.IsLinux())
        {
            return;
        }

        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        using var listener = JobTcpListener.Bind(IoTestSupport.Loopback, runtime);
        var wrong = new List<string>();
        var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(20);
        int rounds = 0;
        while (DateTime.UtcNow < deadline && wrong.Count == 0)
        {
            rounds++;
            Job<JobTcpConnection> accepting = listener.AcceptAsync();
            using JobTcpConnection client = JobTcpConnection.ConnectAsync(listener.LocalEndPoint, runtime).Wait();
            JobTcpConnection server = accepting.Wait();
            Stream view = server.AsStream(ownsConnection: false);
            using var go = new Barrier(2);
            Exception? error = null;
            var reader = new Thread(() =>
            {
                go.SignalAndWait();
                try
                {
                    _ = view.Read(new byte[4]);
                }
                catch (Exception e)
                {
                    error = e;
                }
            });
            reader.Start();
            go.SignalAndWait();
            Thread.SpinWait(rounds % 200);
            server.Dispose();
            reader.Join();
            if (error is not ObjectDisposedException { ObjectName: nameof(JobTcpConnection) })
            {
                wrong.Add($"ObjectName={(error as ObjectDisposedException)?.ObjectName}: {error}");
            }
        }

        output.WriteLine($"rounds: {rounds}");
        Assert.True(wrong.Count == 0, $"after {rounds} rounds: " + string.Join(" | ", wrong));
    }

    [Fact]
    public void Review_ReadAsync_RacingDispose_ThrowsObjectDisposedNamingTheConnection()
    {
        if (!OperatingSystem.IsLinux())
        {
            return;
        }

        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        using var listener = JobTcpListener.Bind(IoTestSupport.Loopback, runtime);
        var wrong = new List<string>();
        var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(20);
        int rounds = 0;
        while (DateTime.UtcNow < deadline && wrong.Count == 0)
        {
            rounds++;
            Job<JobTcpConnection> accepting = listener.AcceptAsync();
            using JobTcpConnection client = JobTcpConnection.ConnectAsync(listener.LocalEndPoint, runtime).Wait();
            JobTcpConnection server = accepting.Wait();
            using var go = new Barrier(2);
            Exception? error = null;
            var reader = new Thread(() =>
            {
                go.SignalAndWait();
                try
                {
                    server.ReadAsync(new byte[4]).Wait();
                }
                catch (Exception e)
                {
                    error = e;
                }
            });
            reader.Start();
            go.SignalAndWait();
            Thread.SpinWait(rounds % 200);
            server.Dispose();
            reader.Join();
            if (error is not ObjectDisposedException { ObjectName: nameof(JobTcpConnection) })
            {
                wrong.Add($"ObjectName={(error as ObjectDisposedException)?.ObjectName}: {error}");
            }
        }

        output.WriteLine($"rounds: {rounds}");
        Assert.True(wrong.Count == 0, $"after {rounds} rounds: " + string.Join(" | ", wrong));
    }
}
