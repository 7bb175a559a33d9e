using System;
using System.IO;
using System.Net;
using System.Net.Sockets;
using Myriad.IO;

namespace Myriad.Tests.IO;

internal static class IoTestSupport
{
    internal static readonly IPEndPoint Loopback = new(IPAddress.Loopback, 0);

    /// <summary>Descriptors open in this process now (Linux), or -1.</summary>
    internal static int OpenDescriptors() =>
        Directory.Exists("/proc/self/fd") ? Directory.GetFiles("/proc/self/fd").Length : -1;

    /// <summary>Reads exactly <paramref name="buffer"/>.Length bytes or throws at end of stream.</summary>
    internal static async Job ReadExactly(JobTcpConnection connection, Memory<byte> buffer)
    {
        while (!buffer.IsEmpty)
        {
            int read = await connection.ReadAsync(buffer);
            if (read == 0)
            {
                throw new EndOfStreamException();
            }

            buffer = buffer[read..];
        }
    }

    /// <summary>A connection that ends with a reset instead of a FIN when closed.</summary>
    internal static void ResetOnClose(Socket socket) => socket.LingerState = new LingerOption(true, 0);
}
