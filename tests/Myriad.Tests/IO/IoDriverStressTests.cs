using System;
using System.IO;
using System.Threading;
using Microsoft.Win32.SafeHandles;
using Myriad.IO;
using Myriad.Tests.Support;
using Xunit;
using Xunit.Abstractions;

namespace Myriad.Tests.IO;

/// <summary>
/// The driver's descriptors closing under a notifier (IoDriver.cs, "Closing under a notifier"): a
/// <see cref="IoDriver.Wake"/> that passed its disposal check must not write into whatever
/// descriptor takes the closed eventfd's number. On the runtime's path the waker is a thread in
/// <c>Worker.Unpark</c> and the disposer the last worker to exit.
/// </summary>
[Collection(HeavyCollection.Name)]
[Trait("Category", "Stress")]
public sealed class IoDriverStressTests(ITestOutputHelper output)
{
    private static volatile IoDriver? s_current;

    [Fact]
    public void Wake_RacingDispose_NeverWritesIntoAReusedDescriptor()
    {
        if (!OperatingSystem.IsLinux())
        {
            return;
        }

        bool stop = false;
        var wakers = new Thread[6];
        for (int i = 0; i < wakers.Length; i++)
        {
            wakers[i] = new Thread(() =>
            {
                while (!Volatile.Read(ref stop))
                {
                    s_current?.Wake();
                }
            });
            wakers[i].Start();
        }

        // Without the fence, a stray write showed within a few rounds. A round costs tens of
        // milliseconds on a small machine (six spinning wakers share its cores with the disposer),
        // so the rounds are capped in time as well as in number; the cap only bounds how long a
        // passing run takes, it does not decide the outcome.
        const int rounds = 300;
        DateTime cap = DateTime.UtcNow + TimeSpan.FromSeconds(15);
        int hits = 0;
        int round = 0;
        try
        {
            for (; round < rounds && hits == 0 && DateTime.UtcNow < cap; round++)
            {
                IoDriver driver = IoDriver.Create();
                s_current = driver;
                Thread.Yield();
                driver.Dispose(); // closes its eventfd and epoll descriptor

                // The driver made its epoll descriptor (N) then its eventfd (N+1), both closed now:
                // the lowest free numbers, so the next two descriptors take them. A wake that still
                // writes shows as a non-zero counter in the second, an eventfd too.
                int filler = LinuxNative.EventFd(0, LinuxNative.CloExec | LinuxNative.NonBlock);
                int fresh = LinuxNative.EventFd(0, LinuxNative.CloExec | LinuxNative.NonBlock);
                LinuxNative.Close(filler);
                s_current = null;
                Thread.Sleep(0);
                using var stream = new FileStream(new SafeFileHandle(fresh, ownsHandle: true), FileAccess.Read, 0);
                byte[] value = new byte[8];
                try
                {
                    if (stream.Read(value, 0, 8) == 8 && BitConverter.ToUInt64(value) != 0)
                    {
                        hits++;
                    }
                }
                catch (IOException)
                {
                    // EAGAIN: nothing was written into it.
                }
            }
        }
        finally
        {
            Volatile.Write(ref stop, true);
            foreach (Thread waker in wakers)
            {
                waker.Join();
            }
        }

        output.WriteLine($"rounds {round}, stray writes {hits}");
        Assert.True(hits == 0, $"a Wake wrote into a descriptor opened after the driver's Dispose (round {round})");
    }
}
