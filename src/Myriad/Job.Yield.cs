using System.Runtime.CompilerServices;
using System.Threading.Tasks;

namespace Myriad;

public readonly partial struct Job
{
    /// <summary>
    /// Gives the other work a turn: awaited inside a job, it queues the job back on its own runtime,
    /// behind the work already queued there, and resumes it from there (Go's <c>runtime.Gosched()</c>);
    /// awaited by code that is not a job, it does what <see cref="Task.Yield"/> does.
    /// </summary>
    /// <remarks>The same awaitable as <see cref="Task.Yield"/>, which a job's builder recognizes: the
    /// two are interchangeable inside a job. A long loop that never waits holds its worker; awaiting
    /// this now and then lets the worker run the jobs queued behind it.</remarks>
    /// <returns>An awaitable that completes asynchronously.</returns>
    public static YieldAwaitable Yield() => Task.Yield();
}
