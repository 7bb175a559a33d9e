using System;
using System.IO;
using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using Myriad.IO;
using Myriad.Scheduling;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.IO;

public sealed class JobTcpConnectionTests
{
    private static MultiThreadRuntime NewRuntime() => new(new RuntimeOptions { WorkerCount = 2 });

    [Theory]
    [InlineData("localhost")] // may resolve to ::1 first, which refuses: the next address is tried
    [InlineData("127.0.0.1")]
    public void ConnectAsync_HostNameOrAddressLiteral_ConnectsToTheListener(string host)
    {
        using var runtime = NewRuntime();
        byte echoed = Bounded.Run(runtime, async () =>
        {
            using var listener = JobTcpListener.Bind(IoTestSupport.Loopback);
            Job server = JobRuntime.Current!.Spawn(async () =>
            {
                using JobTcpConnection peer = await listener.AcceptAsync();
                byte[] one = new byte[1];
                await IoTestSupport.ReadExactly(peer, one);
                await peer.WriteAsync(one);
            });

            using JobTcpConnection client = await JobTcpConnection.ConnectAsync(host, listener.LocalEndPoint.Port);
            Assert.Equal(listener.LocalEndPoint.Port, ((System.Net.IPEndPoint)client.RemoteEndPoint!).Port);
            await client.WriteAsync(new byte[] { 42 });
            byte[] reply = new byte[1];
            await IoTestSupport.ReadExactly(client, reply);
            await server;
            return reply[0];
        });

        Assert.Equal(42, echoed);
    }

    [Fact]
    public void ConnectAsync_BadHostOrPort_ThrowsAtTheCall()
    {
        Assert.Throws<ArgumentNullException>("host", () => JobTcpConnection.ConnectAsync(null!, 80));
        Assert.Throws<ArgumentException>("host", () => JobTcpConnection.ConnectAsync("", 80));
        Assert.Throws<ArgumentOutOfRangeException>("port", () => JobTcpConnection.ConnectAsync("localhost", -1));
        Assert.Throws<ArgumentOutOfRangeException>("port", () => JobTcpConnection.ConnectAsync("localhost", 65536));
    }

    [Fact]
    public void ReadWrite_OnMultiThreadRuntime_EchoesThroughTheDriver()
    {
        using var runtime = NewRuntime();
        int echoed = Bounded.Run(runtime, async () =>
        {
            using var listener = JobTcpListener.Bind(IoTestSupport.Loopback);
            Assert.Equal(OperatingSystem.IsLinux(), listener.UsesIoDriver);
            Job server = JobRuntime.Current!.Spawn(async () =>
            {
                using JobTcpConnection peer = await listener.AcceptAsync();
                byte[] buffer = new byte[64];
                int read;
                while ((read = await peer.ReadAsync(buffer)) > 0)
                {
                    await peer.WriteAsync(buffer.AsMemory(0, read));
                }
            });

            using JobTcpConnection client = await JobTcpConnection.ConnectAsync(listener.LocalEndPoint);
            Assert.Equal(OperatingSystem.IsLinux(), client.UsesIoDriver);
            byte[] request = new byte[64];
            byte[] reply = new byte[64];
            int total = 0;
            for (int i = 0; i < 200; i++)
            {
                request.AsSpan().Fill((byte)i);
                await client.WriteAsync(request);
                await IoTestSupport.ReadExactly(client, reply);
                Assert.Equal(request, reply);
                total++;
            }

            client.ShutdownWrite();
            await server;
            return total;
        });

        Assert.Equal(200, echoed);
    }

    [Fact]
    public void ConnectAsync_ThroughTheDriver_ReportsBothEndPoints()
    {
        // The driver calls connect itself, so the Socket object never learns the addresses; the
        // connection reports them as a BCL-connected one does, and as the accepted side sees them.
        using var runtime = NewRuntime();
        (string? clientLocal, string? clientRemote, string? serverLocal, string? serverRemote, bool driver) = Bounded.Run(runtime, async () =>
        {
            using var listener = JobTcpListener.Bind(IoTestSupport.Loopback);
            Job<JobTcpConnection> accept = listener.AcceptAsync();
            using JobTcpConnection client = await JobTcpConnection.ConnectAsync(listener.LocalEndPoint);
            using JobTcpConnection server = await accept;
            return (client.LocalEndPoint?.ToString(), client.RemoteEndPoint?.ToString(), server.LocalEndPoint?.ToString(), server.RemoteEndPoint?.ToString(), client.UsesIoDriver);
        });
        Assert.Equal(OperatingSystem.IsLinux(), driver);
        Assert.NotNull(clientLocal);
        Assert.Equal(serverRemote, clientLocal);
        Assert.Equal(serverLocal, clientRemote);
    }

    [Fact]
    public void ReadWrite_OnCurrentThreadRuntime_FallsBackToBclSockets()
    {
        using var runtime = new CurrentThreadRuntime();
        using var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        Task<Socket> accepted = listener.AcceptSocketAsync();
        string reply = Bounded.Run(runtime, async () =>
        {
            using JobTcpConnection client = await JobTcpConnection.ConnectAsync((IPEndPoint)listener.LocalEndpoint);
            Assert.False(client.UsesIoDriver);
            using Socket peer = await accepted;
            await client.WriteAsync("ping"u8.ToArray());
            byte[] buffer = new byte[4];
            int read = peer.Receive(buffer);
            peer.Send(buffer, read, SocketFlags.None);
            await IoTestSupport.ReadExactly(client, buffer);
            return System.Text.Encoding.ASCII.GetString(buffer);
        });

        Assert.Equal("ping", reply);
    }

    [Fact]
    public void ReadAsync_PeerReset_ThrowsConnectionReset()
    {
        using var runtime = NewRuntime();
        SocketException error = Bounded.Run(runtime, async () =>
        {
            using var listener = JobTcpListener.Bind(IoTestSupport.Loopback);
            using var client = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
            client.Connect(listener.LocalEndPoint);
            using JobTcpConnection server = await listener.AcceptAsync();
            Job<int> pending = server.ReadAsync(new byte[16]);
            IoTestSupport.ResetOnClose(client);
            client.Close();
            try
            {
                await pending;
                throw new Xunit.Sdk.XunitException("the read succeeded after a reset");
            }
            catch (SocketException reset)
            {
                return reset;
            }
        });

        Assert.Equal(SocketError.ConnectionReset, error.SocketErrorCode);
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void Dispose_WithLingerStateZero_ResetsThePeer(bool driver)
    {
        // The socket options users set on a TcpClient: a linger of zero makes the close a reset.
        using var runtime = NewRuntime();
        SocketError seen = Bounded.Run(runtime, async () =>
        {
            using var listener = JobTcpListener.Bind(IoTestSupport.Loopback, driver ? JobRuntime.Current : null);
            using var peer = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
            peer.Connect(listener.LocalEndPoint);
            JobTcpConnection server = await listener.AcceptAsync();
            Assert.Equal(driver && OperatingSystem.IsLinux(), server.UsesIoDriver);
            server.LingerState = new LingerOption(true, 0);
            Assert.True(server.LingerState.Enabled);
            Assert.Equal(0, server.LingerState.LingerTime);
            server.ReceiveBufferSize = 64 * 1024;
            Assert.True(server.ReceiveBufferSize >= 64 * 1024); // the kernel may round it up
            server.SendBufferSize = 64 * 1024;
            Assert.True(server.SendBufferSize >= 64 * 1024);
            server.Dispose();
            try
            {
                peer.Receive(new byte[1]);
                return SocketError.Success;
            }
            catch (SocketException error)
            {
                return error.SocketErrorCode;
            }
        });

        Assert.Equal(SocketError.ConnectionReset, seen);
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void AsStream_PeerReset_ReadsAndWritesThrowIOExceptionAroundTheSocketError(bool driver)
    {
        // As NetworkStream: code written against Stream catches IOException, with the socket's
        // error inside (the connection itself throws the SocketException).
        using var runtime = NewRuntime();
        (Exception pendingRead, Exception write, Exception syncRead) = Bounded.Run(runtime, async () =>
        {
            using var listener = JobTcpListener.Bind(IoTestSupport.Loopback, driver ? JobRuntime.Current : null);

            // A read pending when the reset comes, then writes into the reset connection.
            (Socket first, JobTcpConnection firstServer) = await Accept(listener);
            Stream stream = firstServer.AsStream();
            ValueTask<int> pending = stream.ReadAsync(new byte[16]);
            IoTestSupport.ResetOnClose(first);
            first.Close();
            Exception pendingRead = await Record(async () => await pending);
            Exception write = await Record(async () =>
            {
                for (int i = 0; i < 100; i++)
                {
                    await stream.WriteAsync(new byte[64 * 1024]);
                }
            });
            firstServer.Dispose();

            // A synchronous read of a connection reset before it.
            (Socket second, JobTcpConnection secondServer) = await Accept(listener);
            IoTestSupport.ResetOnClose(second);
            second.Close();
            await Job.Delay(50);
            Exception syncRead = await Record(() => Task.FromResult(secondServer.AsStream().Read(new byte[16])));
            secondServer.Dispose();
            return (pendingRead, write, syncRead);
        });

        foreach (Exception e in new[] { pendingRead, write, syncRead })
        {
            IOException io = Assert.IsType<IOException>(e);
            Assert.IsType<SocketException>(io.InnerException);
        }

        Assert.Equal(SocketError.ConnectionReset, ((SocketException)pendingRead.InnerException!).SocketErrorCode);

        static async Job<(Socket Client, JobTcpConnection Server)> Accept(JobTcpListener listener)
        {
            var client = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
            client.Connect(listener.LocalEndPoint);
            JobTcpConnection server = await listener.AcceptAsync();
            Assert.Equal(listener.UsesIoDriver, server.UsesIoDriver);
            return (client, server);
        }

        static async Task<Exception> Record(Func<Task> body)
        {
            try
            {
                await body();
            }
            catch (Exception e)
            {
                return e;
            }

            throw new Xunit.Sdk.XunitException("no exception");
        }
    }

    [Fact]
    public void ShutdownWrite_HalfClose_PeerReadsEndAndStillReplies()
    {
        using var runtime = NewRuntime();
        string reply = Bounded.Run(runtime, async () =>
        {
            using var listener = JobTcpListener.Bind(IoTestSupport.Loopback);
            Job<JobTcpConnection> accepting = listener.AcceptAsync();
            using JobTcpConnection client = await JobTcpConnection.ConnectAsync(listener.LocalEndPoint);
            using JobTcpConnection server = await accepting;
            await client.WriteAsync("abc"u8.ToArray());
            client.ShutdownWrite();

            byte[] buffer = new byte[16];
            int total = 0;
            int read;
            while ((read = await server.ReadAsync(buffer.AsMemory(total))) > 0)
            {
                total += read;
            }

            Assert.Equal(3, total);
            Assert.Equal(0, await server.ReadAsync(buffer)); // the end stays the end
            await server.WriteAsync(buffer.AsMemory(0, total)); // the other direction is still open
            server.ShutdownWrite();
            byte[] back = new byte[3];
            await IoTestSupport.ReadExactly(client, back);
            Assert.Equal(0, await client.ReadAsync(buffer));
            return System.Text.Encoding.ASCII.GetString(back);
        });

        Assert.Equal("abc", reply);
    }

    [Fact]
    public void ReadAsync_CanceledWhilePending_ThrowsAndConnectionStaysUsable()
    {
        using var runtime = NewRuntime();
        int after = Bounded.Run(runtime, async () =>
        {
            using var listener = JobTcpListener.Bind(IoTestSupport.Loopback);
            Job<JobTcpConnection> accepting = listener.AcceptAsync();
            using JobTcpConnection client = await JobTcpConnection.ConnectAsync(listener.LocalEndPoint);
            using JobTcpConnection server = await accepting;
            using var cts = new CancellationTokenSource();
            Job<int> pending = server.ReadAsync(new byte[8], cts.Token);
            Assert.False(pending.IsCompleted);
            cts.Cancel();
            await Assert.ThrowsAnyAsync<OperationCanceledException>(() => pending.AsTask());

            await client.WriteAsync(new byte[] { 1, 2, 3 });
            byte[] buffer = new byte[3];
            await IoTestSupport.ReadExactly(server, buffer);
            return buffer[2];
        });

        Assert.Equal(3, after);
    }

    [Fact]
    public void ReadAsync_DisposedWhilePending_ThrowsObjectDisposed()
    {
        using var runtime = NewRuntime();
        Bounded.Run(runtime, async () =>
        {
            using var listener = JobTcpListener.Bind(IoTestSupport.Loopback);
            Job<JobTcpConnection> accepting = listener.AcceptAsync();
            using JobTcpConnection client = await JobTcpConnection.ConnectAsync(listener.LocalEndPoint);
            JobTcpConnection server = await accepting;
            Job<int> pending = server.ReadAsync(new byte[8]);
            server.Dispose();
            await Assert.ThrowsAsync<ObjectDisposedException>(() => pending.AsTask());
            await Assert.ThrowsAsync<ObjectDisposedException>(() => server.ReadAsync(new byte[8]).AsTask());
            await Assert.ThrowsAsync<ObjectDisposedException>(() => server.WriteAsync(new byte[8]).AsTask());
        });
    }

    [Fact]
    public void AcceptAsync_ListenerDisposedWhilePending_ThrowsObjectDisposed()
    {
        using var runtime = NewRuntime();
        Bounded.Run(runtime, async () =>
        {
            var listener = JobTcpListener.Bind(IoTestSupport.Loopback);
            Job<JobTcpConnection> pending = listener.AcceptAsync();
            listener.Dispose();
            await Assert.ThrowsAnyAsync<Exception>(() => pending.AsTask());
        });
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void BindAndConnectAsync_OnADisposedRuntime_ThrowObjectDisposedNamingTheRuntime(bool usedIoBefore)
    {
        var runtime = NewRuntime();
        if (usedIoBefore)
        {
            using var listener = JobTcpListener.Bind(IoTestSupport.Loopback, runtime);
        }

        runtime.Dispose();
        if (!OperatingSystem.IsLinux())
        {
            return; // the BCL path does not use the runtime for I/O
        }

        var bind = Assert.Throws<ObjectDisposedException>(() => JobTcpListener.Bind(IoTestSupport.Loopback, runtime));
        var connect = Assert.Throws<ObjectDisposedException>(() => JobTcpConnection.ConnectAsync(IoTestSupport.Loopback, runtime));
        Assert.Equal(typeof(MultiThreadRuntime).FullName, bind.ObjectName);
        Assert.Equal(typeof(MultiThreadRuntime).FullName, connect.ObjectName);
    }

    [Fact]
    public void ReadAsync_SecondConcurrentRead_ThrowsInvalidOperation()
    {
        using var runtime = NewRuntime();
        Bounded.Run(runtime, async () =>
        {
            using var listener = JobTcpListener.Bind(IoTestSupport.Loopback);
            Job<JobTcpConnection> accepting = listener.AcceptAsync();
            using JobTcpConnection client = await JobTcpConnection.ConnectAsync(listener.LocalEndPoint);
            using JobTcpConnection server = await accepting;
            Job<int> first = server.ReadAsync(new byte[8]);
            Assert.Throws<InvalidOperationException>(() => server.ReadAsync(new byte[8]));
            await client.WriteAsync(new byte[] { 7 });
            Assert.Equal(1, await first);
        });
    }

    [Fact]
    public void ConnectAsync_NobodyListening_ThrowsConnectionRefused()
    {
        using var runtime = NewRuntime();
        var port = new TcpListener(IPAddress.Loopback, 0);
        port.Start();
        var endPoint = (IPEndPoint)port.LocalEndpoint;
        port.Stop();
        SocketException error = Bounded.Run(runtime, async () =>
        {
            try
            {
                using JobTcpConnection connection = await JobTcpConnection.ConnectAsync(endPoint);
                throw new Xunit.Sdk.XunitException("connected to a closed port");
            }
            catch (SocketException refused)
            {
                return refused;
            }
        });

        Assert.Equal(SocketError.ConnectionRefused, error.SocketErrorCode);
    }

    [Fact]
    public void ConnectAsync_ImmediateFailure_FaultsTheJobInsteadOfThrowingAtTheCall()
    {
        using var runtime = NewRuntime();
        Bounded.Run(runtime, async () =>
        {
            // TCP to the broadcast address fails inside connect itself (no route), not later.
            Job<JobTcpConnection> connecting = default;
            Exception? atCall = Record.Exception(() => connecting = JobTcpConnection.ConnectAsync(new IPEndPoint(IPAddress.Broadcast, 9)));
            Assert.Null(atCall);
            await Assert.ThrowsAsync<SocketException>(() => connecting.AsTask());
        });
    }

    [Fact]
    public void ReadWrite_SteadyState_AllocateNothingPerRoundTrip()
    {
        if (!OperatingSystem.IsLinux())
        {
            return;
        }

        // One worker and no spare threads: the measurement reads the allocation counter of the thread
        // the client's loop runs on, so that loop must not move to another thread. On two workers it
        // did under CPU starvation (a sibling, or the watchdog's rescue poll, picking the job up
        // when the worker had not polled for a while), and the counter then read other threads' work.
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1, MaxSpareThreads = 0 });
        long bytes = Bounded.Run(runtime, async () =>
        {
            using var listener = JobTcpListener.Bind(IoTestSupport.Loopback);
            Job<JobTcpConnection> accepting = listener.AcceptAsync();
            using JobTcpConnection client = await JobTcpConnection.ConnectAsync(listener.LocalEndPoint);
            using JobTcpConnection server = await accepting;
            byte[] request = new byte[32];
            byte[] reply = new byte[32];
            Job echo = JobRuntime.Current!.Spawn(async () =>
            {
                byte[] buffer = new byte[32];
                int read;
                while ((read = await server.ReadAsync(buffer)) > 0)
                {
                    await server.WriteAsync(buffer.AsMemory(0, read));
                }
            });

            long measured = await SteadyState.AllocatedBytesAsync(async n =>
            {
                for (int i = 0; i < n; i++)
                {
                    await client.WriteAsync(request);
                    await IoTestSupport.ReadExactly(client, reply);
                }
            }, 200);
            client.ShutdownWrite();
            await echo;
            return measured;
        }, TimeSpan.FromSeconds(60));

        // Per-thread accounting of the client's loop: the reads that wait reuse the connection's cell.
        Assert.True(bytes <= 0, $"{bytes} bytes allocated by 200 extra round trips");
    }

    [Fact]
    public void AsStream_UnderSslStream_CompletesAHandshakeAndExchangesData()
    {
        using var runtime = NewRuntime();
        using var certificate = TestCertificate.Create();
        string reply = Bounded.Run(runtime, async () =>
        {
            using var listener = JobTcpListener.Bind(IoTestSupport.Loopback);
            Job<JobTcpConnection> accepting = listener.AcceptAsync();
            using JobTcpConnection client = await JobTcpConnection.ConnectAsync(listener.LocalEndPoint);
            using JobTcpConnection server = await accepting;
            using var serverSsl = new SslStream(server.AsStream(ownsConnection: false));
            using var clientSsl = new SslStream(client.AsStream(ownsConnection: false), false, (_, _, _, _) => true);
            Task serverHandshake = serverSsl.AuthenticateAsServerAsync(certificate);
            await clientSsl.AuthenticateAsClientAsync("localhost");
            await serverHandshake;
            await clientSsl.WriteAsync("hello"u8.ToArray());
            byte[] buffer = new byte[5];
            await serverSsl.ReadExactlyAsync(buffer);
            return System.Text.Encoding.ASCII.GetString(buffer);
        });

        Assert.Equal("hello", reply);
    }
}
