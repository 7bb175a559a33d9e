using System;
using System.Collections.Generic;
using System.IO;
using System.Net.Sockets;
using System.Threading;
using Myriad.IO;
using Myriad.Scheduling;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.IO;

/// <summary>
/// Disposal racing the driver's own system calls. Closing a socket that another thread is using
/// makes .NET disconnect it to unblock that call, so the call fails with a socket error
/// (ECONNABORTED from recv, EINVAL from accept4) that disposal caused: the operation must still end
/// with <see cref="ObjectDisposedException"/> (or its data, when the data won), never with that error.
/// A call that starts just after the close gets the BCL socket's own exception instead, naming
/// <c>System.Net.Sockets.Socket</c>: the operation must still throw the one naming the connection or
/// the listener, as docs/io.md promises.
/// </summary>
public sealed class JobTcpDisposeRaceStressTests
{
    private const int Rounds = 20;
    private const int PairsPerRound = 100;

    [Fact]
    public void WriteAsync_DisposedWhileThePeerDrains_FailsWithObjectDisposed()
    {
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        List<string> wrong = Bounded.Run(runtime, async () =>
        {
            using var listener = JobTcpListener.Bind(IoTestSupport.Loopback);
            var wrongOutcomes = new List<string>();
            for (int round = 0; round < 30; round++)
            {
                using var peer = new Socket(SocketType.Stream, ProtocolType.Tcp);
                Job<JobTcpConnection> accepting = listener.AcceptAsync();
                peer.Connect(listener.LocalEndPoint);
                JobTcpConnection server = await accepting;

                // The peer drains as fast as it can, so the write spends its time in send calls,
                // one of which the disposal interrupts.
                TestThread drain = TestThread.Start(() =>
                {
                    byte[] sink = new byte[1 << 16];
                    try
                    {
                        while (peer.Receive(sink) > 0)
                        {
                        }
                    }
                    catch (SocketException)
                    {
                    }
                }, "drain");
                Job write = JobRuntime.Current!.Spawn(server, static async s => await s.WriteAsync(new byte[256 << 20]));
                Thread.Sleep(2 + (round % 10));
                server.Dispose();
                try
                {
                    await write;
                    wrongOutcomes.Add("256 MiB written before the disposal");
                }
                catch (Exception error)
                {
                    NoteUnlessDisposed(wrongOutcomes, error, nameof(JobTcpConnection));
                }

                Assert.True(drain.Join(Bounded.Limit), "the peer's drain hung"); // the disposal ended the peer's stream
            }

            return wrongOutcomes;
        }, TimeSpan.FromSeconds(60));

        Assert.Empty(wrong);
    }

    [Fact]
    public void ReadAsync_DisposeRacingArrivingData_EndsWithDataOrObjectDisposed()
    {
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        List<string> wrong = Bounded.Run(runtime, async () =>
        {
            using var listener = JobTcpListener.Bind(IoTestSupport.Loopback);
            var wrongOutcomes = new List<string>();
            for (int round = 0; round < Rounds; round++)
            {
                var clients = new Socket[PairsPerRound];
                var servers = new JobTcpConnection[PairsPerRound];
                var reads = new Job<int>[PairsPerRound];
                for (int i = 0; i < PairsPerRound; i++)
                {
                    Job<JobTcpConnection> accepting = listener.AcceptAsync();
                    clients[i] = new Socket(SocketType.Stream, ProtocolType.Tcp);
                    clients[i].Connect(listener.LocalEndPoint);
                    servers[i] = await accepting;
                    reads[i] = servers[i].ReadAsync(new byte[4]);
                }

                // The data wakes the reads on the polling worker while another thread disposes.
                TestThread writer = TestThread.Start(() =>
                {
                    foreach (Socket client in clients)
                    {
                        client.Send(new byte[] { 1 });
                    }
                }, "writer");
                TestThread disposer = TestThread.Start(() =>
                {
                    foreach (JobTcpConnection server in servers)
                    {
                        server.Dispose();
                    }
                }, "disposer");
                foreach (Job<int> read in reads)
                {
                    try
                    {
                        int n = await read;
                        if (n != 1)
                        {
                            wrongOutcomes.Add($"read returned {n}");
                        }
                    }
                    catch (Exception error)
                    {
                        NoteUnlessDisposed(wrongOutcomes, error, nameof(JobTcpConnection));
                    }
                }

                JoinAndClose(writer, disposer, clients);
            }

            return wrongOutcomes;
        }, TimeSpan.FromSeconds(60));

        Assert.Empty(wrong);
    }

    [Fact]
    public void AcceptAsync_DisposeRacingAnArrivingConnection_EndsWithConnectionOrObjectDisposed()
    {
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        List<string> wrong = Bounded.Run(runtime, async () =>
        {
            var wrongOutcomes = new List<string>();
            for (int round = 0; round < Rounds; round++)
            {
                var listeners = new JobTcpListener[PairsPerRound];
                var endPoints = new System.Net.IPEndPoint[PairsPerRound];
                var accepts = new Job<JobTcpConnection>[PairsPerRound];
                for (int i = 0; i < PairsPerRound; i++)
                {
                    listeners[i] = JobTcpListener.Bind(IoTestSupport.Loopback);
                    endPoints[i] = listeners[i].LocalEndPoint;
                    accepts[i] = listeners[i].AcceptAsync();
                }

                var clients = new List<Socket>();
                TestThread connector = TestThread.Start(() =>
                {
                    foreach (System.Net.IPEndPoint endPoint in endPoints)
                    {
                        var client = new Socket(SocketType.Stream, ProtocolType.Tcp);
                        clients.Add(client);
                        try
                        {
                            client.Connect(endPoint);
                        }
                        catch (SocketException)
                        {
                            // closed first
                        }
                    }
                }, "connector");
                TestThread disposer = TestThread.Start(() =>
                {
                    foreach (JobTcpListener listener in listeners)
                    {
                        listener.Dispose();
                    }
                }, "disposer");
                foreach (Job<JobTcpConnection> accept in accepts)
                {
                    try
                    {
                        (await accept).Dispose();
                    }
                    catch (Exception error)
                    {
                        NoteUnlessDisposed(wrongOutcomes, error, nameof(JobTcpListener));
                    }
                }

                JoinAndClose(connector, disposer, clients);
            }

            return wrongOutcomes;
        }, TimeSpan.FromSeconds(60));

        Assert.Empty(wrong);
    }

    [Fact]
    public void ReadAsync_RacingDispose_ThrowsObjectDisposedNamingTheConnection()
    {
        List<string> wrong = RaceDisposeFromAThread(static server => server.ReadAsync(new byte[4]).Wait());
        Assert.Empty(wrong);
    }

    [Fact]
    public void StreamRead_RacingDispose_ThrowsObjectDisposedNamingTheConnection()
    {
        // The view's blocking read: a receive that would block, then Socket.Poll, either of which
        // the disposal may close the socket before.
        List<string> wrong = RaceDisposeFromAThread(static server => _ = server.AsStream(ownsConnection: false).Read(new byte[4]));
        Assert.Empty(wrong);
    }

    [Fact]
    public void StreamWrite_RacingDispose_ThrowsObjectDisposedNamingTheConnection()
    {
        // The view's blocking write, with more than the socket buffers take, so that it waits in
        // Socket.Poll for a peer that never reads.
        byte[] payload = new byte[16 << 20];
        List<string> wrong = RaceDisposeFromAThread(server => server.AsStream(ownsConnection: false).Write(payload));
        Assert.Empty(wrong);
    }

    /// <summary>
    /// Rounds of <paramref name="operation"/> on a plain thread while the test thread disposes the
    /// connection, after a spin that shifts the disposal across the operation's system calls from
    /// one round to the next (a stop at the first wrong outcome, and a cap on the time, keep a
    /// failing or slow run short; neither decides the outcome). The operation must throw the
    /// connection's <see cref="ObjectDisposedException"/>: the peer never writes, so it cannot complete.
    /// </summary>
    private static List<string> RaceDisposeFromAThread(Action<JobTcpConnection> operation)
    {
        var wrong = new List<string>();
        if (!OperatingSystem.IsLinux())
        {
            return wrong;
        }

        const int rounds = 2000;
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        using var listener = JobTcpListener.Bind(IoTestSupport.Loopback, runtime);
        DateTime cap = DateTime.UtcNow + TimeSpan.FromSeconds(30);
        for (int round = 0; round < rounds && wrong.Count == 0 && DateTime.UtcNow < cap; round++)
        {
            Job<JobTcpConnection> accepting = listener.AcceptAsync();
            using JobTcpConnection client = JobTcpConnection.ConnectAsync(listener.LocalEndPoint, runtime).Wait();
            JobTcpConnection server = accepting.Wait();
            using var go = new Barrier(2);
            Exception? error = null;
            var racer = new Thread(() =>
            {
                go.SignalAndWait();
                try
                {
                    operation(server);
                }
                catch (Exception e)
                {
                    error = e;
                }
            });
            racer.Start();
            go.SignalAndWait();
            Thread.SpinWait(round % 200);
            server.Dispose();
            racer.Join();
            if (error is null)
            {
                wrong.Add($"round {round}: the operation completed");
            }
            else
            {
                NoteUnlessDisposed(wrong, error is IOException { InnerException: { } inner } ? inner : error, nameof(JobTcpConnection));
            }
        }

        return wrong;
    }

    /// <summary>An outcome other than the disposal's own exception, naming <paramref name="owner"/>, is wrong.</summary>
    private static void NoteUnlessDisposed(List<string> wrongOutcomes, Exception error, string owner)
    {
        if (error is not ObjectDisposedException disposed || disposed.ObjectName != owner)
        {
            wrongOutcomes.Add($"{error.GetType().Name} ({(error as ObjectDisposedException)?.ObjectName}): {error.Message}");
        }
    }

    /// <summary>Ends a round: both racing threads are done, then the plain clients are closed.</summary>
    private static void JoinAndClose(TestThread racer, TestThread disposer, IEnumerable<Socket> clients)
    {
        Assert.True(racer.Join(Bounded.Limit), "a racing thread hung");
        Assert.True(disposer.Join(Bounded.Limit), "the disposing thread hung");
        foreach (Socket client in clients)
        {
            client.Dispose();
        }
    }
}
