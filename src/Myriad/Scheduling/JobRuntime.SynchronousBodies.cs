using System;
using System.Threading;
using System.Threading.Tasks;

namespace Myriad.Scheduling;

/// <summary>
/// The spawn and run forms for synchronous bodies without state, the counterparts of
/// <see cref="Task.Run(Action)"/>, and the blocking run of a synchronous body with state.
/// </summary>
/// <remarks>
/// An <c>async</c> lambda still binds to the job forms (<c>Func&lt;Job&gt;</c>, <c>Func&lt;Job&lt;T&gt;&gt;</c>),
/// as <c>Task.Run</c> binds it to <c>Func&lt;Task&gt;</c>. A lambda whose body is a call that returns a
/// <see cref="Task"/> (<c>() => client.PostAsync(...)</c>) binds to the <see cref="Action"/> form, and
/// the job does not wait for that task: write <c>async () => await client.PostAsync(...)</c>. A
/// synchronous body that computes a value has no form of its own: return it from a job
/// (<c>static s => Job.FromResult(s * 2)</c>).
/// </remarks>
public abstract partial class JobRuntime
{
    /// <summary>
    /// Runs a synchronous body that needs no state on the runtime (the delegate itself may still be a
    /// closure), as <see cref="Task.Run(Action)"/> does on the thread pool; returns a handle to await.
    /// </summary>
    /// <param name="body">The job's code.</param>
    /// <param name="cancellationToken">If canceled before the job starts, it ends canceled without running.</param>
    /// <exception cref="ArgumentNullException"><paramref name="body"/> is null.</exception>
    /// <exception cref="ObjectDisposedException">The runtime was disposed.</exception>
    public Job Spawn(Action body, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(body);
        return Spawn(body, static b => b(), cancellationToken);
    }

    /// <summary>
    /// Fire-and-forget form of <see cref="Spawn(Action, CancellationToken)"/>: runs a synchronous body
    /// that needs no state on the runtime. Its failure raises <see cref="UnobservedException"/>.
    /// </summary>
    /// <exception cref="ArgumentNullException"><paramref name="body"/> is null.</exception>
    /// <exception cref="ObjectDisposedException">The runtime was disposed.</exception>
    public void SpawnDetached(Action body, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(body);
        SpawnDetached(body, static b => b(), cancellationToken);
    }

    /// <summary>Blocking entry from ordinary code for a synchronous body: runs it on the runtime and waits for it (see <see cref="Run{TState, TResult}(TState, Func{TState, Job{TResult}}, CancellationToken)"/>).</summary>
    /// <exception cref="ArgumentNullException"><paramref name="body"/> is null.</exception>
    public void Run(Action body, CancellationToken cancellationToken = default)
        => Spawn(body, cancellationToken).Wait();

    /// <inheritdoc cref="Run(Action, CancellationToken)"/>
    public void Run<TState>(TState state, Action<TState> body, CancellationToken cancellationToken = default)
        => Spawn(state, body, cancellationToken).Wait();
}
