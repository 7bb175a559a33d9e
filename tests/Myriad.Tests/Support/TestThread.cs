using System;
using System.Runtime.ExceptionServices;
using System.Threading;

namespace Myriad.Tests.Support;

/// <summary>
/// A plain background thread for a test whose body calls into the library while the test races it
/// (a disposal, a hand-off): an exception that escapes such a body would end the whole test host
/// and hide which test failed. Here it is kept and rethrown by <see cref="Join"/>, so it fails the
/// test that started the thread.
/// </summary>
internal sealed class TestThread
{
    private readonly Thread _thread;
    private ExceptionDispatchInfo? _error;

    private TestThread(Action body, string name, int stackSize)
    {
        _thread = new Thread(() =>
        {
            try
            {
                body();
            }
            catch (Exception e)
            {
                Volatile.Write(ref _error, ExceptionDispatchInfo.Capture(e));
            }
        }, stackSize) { IsBackground = true, Name = name };
    }

    /// <summary>Starts <paramref name="body"/> on a new background thread (0: the default stack size).</summary>
    internal static TestThread Start(Action body, string name, int stackSize = 0)
    {
        var thread = new TestThread(body, name, stackSize);
        thread._thread.Start();
        return thread;
    }

    /// <summary>
    /// Waits up to <paramref name="timeout"/>; false if the thread is still running. A thread that
    /// ended with an exception rethrows it here.
    /// </summary>
    internal bool Join(TimeSpan timeout)
    {
        if (!_thread.Join(timeout))
        {
            return false;
        }

        Volatile.Read(ref _error)?.Throw();
        return true;
    }
}
