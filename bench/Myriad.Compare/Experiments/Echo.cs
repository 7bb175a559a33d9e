using System;
using System.IO;
using System.Net;
using System.Net.Sockets;
using System.Runtime.InteropServices;
using System.Threading.Tasks;
using Myriad.IO;
using Myriad.Scheduling;

namespace Myriad.Compare.Experiments;

/// <summary>
/// A TCP echo server and N clients on loopback in one process; each client makes Work round trips
/// of a 64-byte message. The result is the number of round trips. Context switches of the measured
/// run (voluntary + involuntary, from getrusage(RUSAGE_SELF), exited threads included) go to <see cref="ChildMetrics"/>.
/// </summary>
internal static class Echo
{
    /// <summary>Bytes per message, as in the published experiment.</summary>
    private const int MessageSize = 64;

    /// <summary>Plain <c>async Task</c> server and clients over BCL sockets on the thread pool.</summary>
    public static long Tpl(Case c) => Measured(() =>
    {
        using Socket listener = Listen();
        var endPoint = (IPEndPoint)listener.LocalEndPoint!;
        Task server = Task.Run(() => ServeTpl(listener, checked((int)c.N)));
        var clients = new Task<long>[c.N];
        for (int i = 0; i < clients.Length; i++)
        {
            clients[i] = Task.Run(() => ClientTpl(endPoint, c.Work));
        }

        long total = 0;
        foreach (Task<long> client in clients)
        {
            total += client.GetAwaiter().GetResult();
        }

        server.GetAwaiter().GetResult();
        return total;
    });

    /// <summary>The same code as jobs on a <see cref="MultiThreadRuntime"/>, awaiting the same BCL socket operations.</summary>
    public static long Myriad(Case c) => Measured(() =>
    {
        using MultiThreadRuntime runtime = Hosts.NewRuntime();
        return runtime.Run(async () =>
        {
            using Socket listener = Listen();
            var endPoint = (IPEndPoint)listener.LocalEndPoint!;
            Job server = runtime.Spawn(() => ServeMyriad(runtime, listener, checked((int)c.N)));
            var clients = new Job<long>[c.N];
            for (int i = 0; i < clients.Length; i++)
            {
                clients[i] = runtime.Spawn(() => ClientMyriad(endPoint, c.Work));
            }

            long total = 0;
            foreach (Job<long> client in clients)
            {
                total += await client;
            }

            await server;
            return total;
        });
    });

    /// <summary>Jobs over <see cref="JobTcpListener"/> and <see cref="JobTcpConnection"/>: the runtime's own I/O driver.</summary>
    public static long Native(Case c) => Measured(() =>
    {
        using MultiThreadRuntime runtime = Hosts.NewRuntime();
        return runtime.Run(async () =>
        {
            using var listener = JobTcpListener.Bind(new IPEndPoint(IPAddress.Loopback, 0), runtime, 4096);
            Job server = runtime.Spawn(() => ServeNative(runtime, listener, checked((int)c.N)));
            var clients = new Job<long>[c.N];
            for (int i = 0; i < clients.Length; i++)
            {
                clients[i] = runtime.Spawn(() => ClientNative(listener.LocalEndPoint, c.Work));
            }

            long total = 0;
            foreach (Job<long> client in clients)
            {
                total += await client;
            }

            await server;
            return total;
        });
    });

    private static long Measured(Func<long> run)
    {
        (long voluntary, long involuntary) before = ContextSwitches();
        long result = run();
        (long voluntary, long involuntary) after = ContextSwitches();
        ChildMetrics.Extra["ctx_voluntary"] = after.voluntary - before.voluntary;
        ChildMetrics.Extra["ctx_switches"] = (after.voluntary - before.voluntary) + (after.involuntary - before.involuntary);
        return result;
    }

    /// <summary>
    /// The process's voluntary and involuntary context switches so far, from
    /// <c>getrusage(RUSAGE_SELF)</c>: the kernel adds the counts of exited threads to it, so a
    /// runtime whose workers exit during the run is counted in full (a sum over the live threads of
    /// /proc/self/task went negative when threads exited). Zero off Linux.
    /// </summary>
    private static (long Voluntary, long Involuntary) ContextSwitches()
    {
        if (!OperatingSystem.IsLinux())
        {
            return (0, 0);
        }

        // struct rusage on 64-bit Linux: two timevals (4 longs), then 14 longs, of which
        // ru_nvcsw is the 13th and ru_nivcsw the 14th.
        var usage = new long[RusageLongs];
        if (GetRusage(RusageSelf, usage) != 0)
        {
            return (0, 0);
        }

        return (usage[RusageLongs - 2], usage[RusageLongs - 1]);
    }

    private const int RusageSelf = 0;
    private const int RusageLongs = 18;

    [DllImport("libc", EntryPoint = "getrusage")]
    private static extern int GetRusage(int who, [Out] long[] usage);

    private static Socket Listen()
    {
        var listener = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        listener.Listen(4096);
        return listener;
    }

    private static async Task ServeTpl(Socket listener, int clients)
    {
        var handlers = new Task[clients];
        for (int i = 0; i < clients; i++)
        {
            Socket peer = await listener.AcceptAsync();
            peer.NoDelay = true;
            handlers[i] = Task.Run(() => EchoTpl(peer));
        }

        await Task.WhenAll(handlers);
    }

    private static async Task EchoTpl(Socket peer)
    {
        using (peer)
        {
            byte[] buffer = new byte[MessageSize];
            int read;
            while ((read = await peer.ReceiveAsync(buffer, SocketFlags.None)) > 0)
            {
                await peer.SendAsync(buffer.AsMemory(0, read), SocketFlags.None);
            }
        }
    }

    private static async Task<long> ClientTpl(IPEndPoint endPoint, int roundTrips)
    {
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        await socket.ConnectAsync(endPoint);
        byte[] message = new byte[MessageSize];
        byte[] reply = new byte[MessageSize];
        for (int i = 0; i < roundTrips; i++)
        {
            await socket.SendAsync(message, SocketFlags.None);
            for (int got = 0; got < MessageSize;)
            {
                int read = await socket.ReceiveAsync(reply.AsMemory(got), SocketFlags.None);
                got += read > 0 ? read : throw new EndOfStreamException();
            }
        }

        socket.Shutdown(SocketShutdown.Send);
        return roundTrips;
    }

    private static async Job ServeMyriad(MultiThreadRuntime runtime, Socket listener, int clients)
    {
        var handlers = new Job[clients];
        for (int i = 0; i < clients; i++)
        {
            Socket peer = await listener.AcceptAsync();
            peer.NoDelay = true;
            handlers[i] = runtime.Spawn(() => EchoMyriad(peer));
        }

        foreach (Job handler in handlers)
        {
            await handler;
        }
    }

    private static async Job EchoMyriad(Socket peer)
    {
        using (peer)
        {
            byte[] buffer = new byte[MessageSize];
            int read;
            while ((read = await peer.ReceiveAsync(buffer, SocketFlags.None)) > 0)
            {
                await peer.SendAsync(buffer.AsMemory(0, read), SocketFlags.None);
            }
        }
    }

    private static async Job<long> ClientMyriad(IPEndPoint endPoint, int roundTrips)
    {
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        await socket.ConnectAsync(endPoint);
        byte[] message = new byte[MessageSize];
        byte[] reply = new byte[MessageSize];
        for (int i = 0; i < roundTrips; i++)
        {
            await socket.SendAsync(message, SocketFlags.None);
            for (int got = 0; got < MessageSize;)
            {
                int read = await socket.ReceiveAsync(reply.AsMemory(got), SocketFlags.None);
                got += read > 0 ? read : throw new EndOfStreamException();
            }
        }

        socket.Shutdown(SocketShutdown.Send);
        return roundTrips;
    }

    private static async Job ServeNative(MultiThreadRuntime runtime, JobTcpListener listener, int clients)
    {
        var handlers = new Job[clients];
        for (int i = 0; i < clients; i++)
        {
            JobTcpConnection peer = await listener.AcceptAsync();
            peer.NoDelay = true;
            handlers[i] = runtime.Spawn(() => EchoNative(peer));
        }

        foreach (Job handler in handlers)
        {
            await handler;
        }
    }

    private static async Job EchoNative(JobTcpConnection peer)
    {
        using (peer)
        {
            byte[] buffer = new byte[MessageSize];
            int read;
            while ((read = await peer.ReadAsync(buffer)) > 0)
            {
                await peer.WriteAsync(buffer.AsMemory(0, read));
            }
        }
    }

    private static async Job<long> ClientNative(IPEndPoint endPoint, int roundTrips)
    {
        using JobTcpConnection connection = await JobTcpConnection.ConnectAsync(endPoint);
        connection.NoDelay = true;
        byte[] message = new byte[MessageSize];
        byte[] reply = new byte[MessageSize];
        for (int i = 0; i < roundTrips; i++)
        {
            await connection.WriteAsync(message);
            for (int got = 0; got < MessageSize;)
            {
                int read = await connection.ReadAsync(reply.AsMemory(got));
                got += read > 0 ? read : throw new EndOfStreamException();
            }
        }

        connection.ShutdownWrite();
        return roundTrips;
    }
}
