using System;
using System.IO;
using System.Net.Sockets;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;
using Myriad.IO;
using Myriad.Scheduling;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.IO;

/// <summary>The synchronous <see cref="Stream"/> methods of <see cref="JobTcpConnection.AsStream"/>.</summary>
public sealed class JobTcpStreamTests
{
    private static readonly TimeSpan Limit = TimeSpan.FromSeconds(20);

    [Fact]
    public void AcceptAndRead_WhileEveryWorkerIsBlockedOutsideMyriad_AreServed()
    {
        // Only workers polled the driver. With the only worker blocked in a call Myriad cannot see
        // (here an event wait; a synchronous read of another connection in a server), a new
        // connection's readiness waited in the kernel, and no spare thread started either: spares
        // start for queued work, and nothing was queued. The watchdog now polls when nobody did.
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1 });
        using var listener = JobTcpListener.Bind(IoTestSupport.Loopback, runtime);
        using var blocked = new ManualResetEventSlim();
        using var release = new ManualResetEventSlim();
        var server = runtime.Spawn(listener, static async l =>
        {
            using JobTcpConnection connection = await l.AcceptAsync();
            byte[] buffer = new byte[1];
            int read = await connection.ReadAsync(buffer);
            return read == 1 ? buffer[0] : -1;
        }).AsTask();
        try
        {
            Thread.Sleep(50); // the accept parks in the driver
            runtime.SpawnDetached((blocked, release), static s =>
            {
                s.blocked.Set();
                s.release.Wait(); // the only worker is out of service
            });
            Assert.True(blocked.Wait(Limit));

            using var client = new Socket(SocketType.Stream, ProtocolType.Tcp);
            client.Connect(listener.LocalEndPoint);
            client.Send([42]);
            Assert.True(server.Wait(Limit), "the server was never served");
            Assert.Equal(42, server.Result);
        }
        finally
        {
            release.Set();
        }
    }

    [Fact]
    public void DetachedRead_FailingWhileEveryWorkerIsBlocked_RaisesUnobservedExceptionOnARuntimeThread()
    {
        // The watchdog's rescue poll completes the read; a detached job's failure is reported
        // inline by its observer, and the handler (user code) ran on the watchdog thread, holding
        // the poller token: a handler that blocked would stop every later rescue.
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1 });
        var raised = new TaskCompletionSource<(bool OnRuntimeThread, Exception Error)>(TaskCreationOptions.RunContinuationsAsynchronously);
        runtime.UnobservedException += (sender, e) => raised.TrySetResult((((JobRuntime)sender!).IsRuntimeThread, e.Exception));
        using var listener = JobTcpListener.Bind(IoTestSupport.Loopback, runtime);
        using var blocked = new ManualResetEventSlim();
        using var release = new ManualResetEventSlim();
        Task<JobTcpConnection> accepted = runtime.Spawn((runtime, listener), static async s =>
        {
            JobTcpConnection connection = await s.listener.AcceptAsync();
            s.runtime.Detach(connection.ReadAsync(new byte[16])); // the operation itself, observed where it completes; fails when the peer resets
            return connection;
        }).AsTask();
        using var client = new Socket(SocketType.Stream, ProtocolType.Tcp);
        try
        {
            client.Connect(listener.LocalEndPoint);
            Assert.True(accepted.Wait(Limit));
            Thread.Sleep(50); // the read parks in the driver
            runtime.SpawnDetached((blocked, release), static s =>
            {
                s.blocked.Set();
                s.release.Wait(); // the only worker is out of service
            });
            Assert.True(blocked.Wait(Limit));
            IoTestSupport.ResetOnClose(client);
            client.Close();

            Assert.True(raised.Task.Wait(Limit), "no UnobservedException");
            Assert.True(raised.Task.Result.OnRuntimeThread, "the handler ran off the runtime's threads");
            Assert.IsType<SocketException>(raised.Task.Result.Error);
        }
        finally
        {
            release.Set();
            if (accepted.IsCompletedSuccessfully)
            {
                accepted.Result.Dispose();
            }
        }
    }

    [Fact]
    public void ReadLine_SynchronousInsideAJobOnOneWorker_CompletesEachRoundTrip()
    {
        // The only worker blocks in ReadLine: nobody else could poll the driver for it.
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1 });
        using var listener = JobTcpListener.Bind(IoTestSupport.Loopback, runtime);
        Assert.Equal(OperatingSystem.IsLinux(), listener.UsesIoDriver);
        var accepted = new StrongBox<JobTcpConnection?>();
        var server = runtime.Spawn((listener, accepted), static async s =>
        {
            using JobTcpConnection connection = await s.listener.AcceptAsync();
            Volatile.Write(ref s.accepted.Value, connection);
            using var reader = new StreamReader(connection.AsStream(ownsConnection: false));
            using var writer = new StreamWriter(connection.AsStream(ownsConnection: false)) { AutoFlush = true };
            int lines = 0;
            string? line;
            while ((line = reader.ReadLine()) != null)
            {
                writer.WriteLine(line + "!");
                lines++;
            }

            return lines;
        }).AsTask();

        using var client = new Socket(SocketType.Stream, ProtocolType.Tcp);
        client.Connect(listener.LocalEndPoint);
        using var stream = new NetworkStream(client);
        using var clientReader = new StreamReader(stream);
        using var clientWriter = new StreamWriter(stream) { AutoFlush = true };
        try
        {
            TestHelpers.OnThread(() =>
            {
                for (int i = 0; i < 5; i++)
                {
                    Thread.Sleep(20); // the server's read has to wait for the data
                    clientWriter.WriteLine($"line {i}");
                    Assert.Equal($"line {i}!", clientReader.ReadLine());
                }
            }, timeout: Limit);

            client.Shutdown(SocketShutdown.Send);
            Assert.True(server.Wait(Limit));
            Assert.Equal(5, server.Result);
        }
        finally
        {
            // A server stuck in its read is released by the disposal, so a failure cannot hang the
            // runtime's Dispose.
            Volatile.Read(ref accepted.Value)?.Dispose();
        }
    }

    [Theory]
    [InlineData(1)]
    [InlineData(2)]
    public void ReadAsyncWait_InsideAJob_CompletesWhenTheDataArrives(int workers)
    {
        // Not the stream: Wait() on the connection's own read job. The worker blocked in the wait
        // must poll the driver itself: with one worker nobody else does, and with two the sibling
        // may be asleep on its parker (it found the poller token taken when it parked).
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = workers });
        using var listener = JobTcpListener.Bind(IoTestSupport.Loopback, runtime);
        var accepted = new StrongBox<JobTcpConnection?>();
        var server = runtime.Spawn((listener, accepted), static async s =>
        {
            JobTcpConnection connection = await s.listener.AcceptAsync();
            Volatile.Write(ref s.accepted.Value, connection);
            byte[] buffer = new byte[16];
            int total = 0;
            for (int i = 0; i < 5; i++)
            {
                int read = connection.ReadAsync(buffer).Wait();
                connection.WriteAsync(buffer.AsMemory(0, read)).Wait();
                total += read;
            }

            return total;
        }).AsTask();

        using var client = new Socket(SocketType.Stream, ProtocolType.Tcp);
        client.Connect(listener.LocalEndPoint);
        client.ReceiveTimeout = (int)Limit.TotalMilliseconds;
        try
        {
            TestHelpers.OnThread(() =>
            {
                byte[] reply = new byte[1];
                for (int i = 0; i < 5; i++)
                {
                    Thread.Sleep(20); // the server's read has to wait for the data
                    client.Send([(byte)i]);
                    Assert.Equal(1, client.Receive(reply));
                    Assert.Equal((byte)i, reply[0]);
                }
            }, timeout: Limit);

            Assert.True(server.Wait(Limit));
            Assert.Equal(5, server.Result);
        }
        finally
        {
            Volatile.Read(ref accepted.Value)?.Dispose();
        }
    }

    [Fact]
    public void Dispose_OfAViewThatDoesNotOwnTheConnection_StopsTheViewAndLeavesTheConnectionUsable()
    {
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        using var listener = JobTcpListener.Bind(IoTestSupport.Loopback, runtime);
        var server = runtime.Spawn(listener, static async l =>
        {
            using JobTcpConnection connection = await l.AcceptAsync();
            byte[] buffer = new byte[4];
            int read = await connection.ReadAsync(buffer);
            return read;
        }).AsTask();

        using JobTcpConnection client = JobTcpConnection.ConnectAsync(listener.LocalEndPoint, runtime).Wait();
        Stream view = client.AsStream(ownsConnection: false);
        view.Dispose();

        Assert.False(view.CanRead);
        Assert.False(view.CanWrite);
        Assert.Throws<ObjectDisposedException>(() => view.Write([1]));
        Assert.Throws<ObjectDisposedException>(() => view.Read(new byte[1], 0, 1));
        Assert.Throws<ObjectDisposedException>(() => { _ = view.WriteAsync(new byte[1]); });
        client.WriteAsync(new byte[] { 1, 2, 3 }).Wait(); // the connection itself still works
        Assert.True(server.Wait(Limit));
        Assert.Equal(3, server.Result);
    }

    [Fact]
    public void Write_SynchronousLargerThanTheSocketBuffers_AllBytesArrive()
    {
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1 });
        using var listener = JobTcpListener.Bind(IoTestSupport.Loopback, runtime);
        byte[] data = new byte[16 << 20];
        new Random(7).NextBytes(data);
        var accepted = new StrongBox<JobTcpConnection?>();
        var server = runtime.Spawn((listener, data, accepted), static async s =>
        {
            using JobTcpConnection connection = await s.listener.AcceptAsync();
            Volatile.Write(ref s.accepted.Value, connection);
            using Stream stream = connection.AsStream(ownsConnection: false);
            stream.Write(s.data, 0, s.data.Length);
            connection.ShutdownWrite();
        }).AsTask();

        using var client = new Socket(SocketType.Stream, ProtocolType.Tcp);
        client.Connect(listener.LocalEndPoint);
        var received = new MemoryStream();
        try
        {
            TestHelpers.OnThread(() =>
            {
                using var stream = new NetworkStream(client);
                stream.CopyTo(received);
            }, timeout: Limit);

            Assert.True(server.Wait(Limit));
            Assert.True(received.ToArray().AsSpan().SequenceEqual(data));
        }
        finally
        {
            Volatile.Read(ref accepted.Value)?.Dispose(); // releases a server stuck in its write
        }
    }

    [Fact]
    public void Read_DisposedWhileBlocked_ThrowsObjectDisposed()
    {
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        using var listener = JobTcpListener.Bind(IoTestSupport.Loopback, runtime);
        var accepting = listener.AcceptAsync().AsTask();
        using JobTcpConnection client = JobTcpConnection.ConnectAsync(listener.LocalEndPoint, runtime).AsTask().Result;
        JobTcpConnection server = accepting.Result;
        Stream stream = server.AsStream();
        Exception? error = null;
        var reader = new Thread(() => error = Record.Exception(() => stream.Read(new byte[8], 0, 8)));
        reader.Start();
        Thread.Sleep(50); // blocked in the read
        stream.Dispose();
        Assert.True(reader.Join(Limit));
        Assert.IsType<ObjectDisposedException>(error);
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void ReadOrWrite_BlockedWhenTheRuntimeIsDisposed_ThrowsTheRuntimesObjectDisposed(bool read)
    {
        // The runtime's disposal aborts the socket's registration but leaves the socket open (its
        // owner disposes it), so a thread blocked in the kernel in a synchronous Read or Write of
        // the Stream view was never woken: it waited until the peer sent, closed, or the connection
        // itself was disposed, while a pending asynchronous operation failed at once.
        var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        using var listener = JobTcpListener.Bind(IoTestSupport.Loopback, runtime);
        var accepting = listener.AcceptAsync().AsTask();
        using JobTcpConnection client = JobTcpConnection.ConnectAsync(listener.LocalEndPoint, runtime).AsTask().Result;
        using JobTcpConnection server = accepting.Result;
        Stream stream = server.AsStream();
        Exception? error = null;
        var blocked = new Thread(() => error = Record.Exception(() =>
        {
            if (read)
            {
                _ = stream.Read(new byte[8], 0, 8);
            }
            else
            {
                byte[] chunk = new byte[1 << 20];
                while (true)
                {
                    stream.Write(chunk, 0, chunk.Length); // the client never reads: the buffers fill up
                }
            }
        }));
        blocked.Start();
        Thread.Sleep(200); // blocked in the kernel
        Assert.True(blocked.IsAlive);
        runtime.Dispose();
        Assert.True(blocked.Join(Limit), "the blocked call was not woken by the runtime's disposal");
        ObjectDisposedException disposed = Assert.IsType<ObjectDisposedException>(error);
        Assert.Contains("The runtime that drives this socket's I/O was disposed.", disposed.Message, StringComparison.Ordinal);
    }
}
