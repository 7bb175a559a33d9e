using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using System.Threading;

namespace Myriad.Internal;

/// <summary>
/// A one-word spin lock guarding short critical sections: channels, coordination primitives and the
/// runtime's injection queue
/// (a few pointer moves; never user code, never a completion).
/// </summary>
/// <remarks>
/// <para><b>Why not <c>lock</c>.</b> A channel is created per pipeline stage (the chained-workers experiment builds a
/// million of them), so the lock must not cost an object; a <see cref="Monitor"/> on the channel itself
/// would let user code that locks the channel deadlock it. The sections guarded here never block and
/// never run user code, so a holder is only ever delayed by preemption.</para>
/// <para><b>Protocol.</b> <c>_taken</c> is 0 (free) or 1 (held).
/// 1. Enter: compare-exchange 0 -> 1; that is the whole uncontended path.
/// 2. Contended: spin with <see cref="SpinWait"/>, reading the word and retrying the exchange only
///    when it reads 0 (no cache-line ping-pong while held). <see cref="SpinWait"/> yields and sleeps
///    as it goes on, so a preempted holder gets the core back.
/// 3. Exit: a release write of 0. The interlocked acquire of step 1 and this release order every
///    access made under the lock.</para>
/// <para>Not reentrant: a holder that enters again spins forever. Callers never call out while holding
/// it, which is also what keeps it free of lock-order cycles (except where <c>Select</c> holds several,
/// in the order described in <c>SelectOperation.Locks.cs</c>).</para>
/// </remarks>
internal struct TinyLock
{
    private int _taken;

    /// <summary>Whether the lock is held (diagnostics and assertions only).</summary>
    internal readonly bool IsHeld => Volatile.Read(ref Unsafe.AsRef(in _taken)) != 0;

    /// <summary>Step 1, falling back to step 2.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal void Enter()
    {
        if (Interlocked.CompareExchange(ref _taken, 1, 0) != 0)
        {
            EnterContended();
        }
    }

    /// <summary>Step 1 alone: takes the lock if it is free, never waits.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal bool TryEnter() => Interlocked.CompareExchange(ref _taken, 1, 0) == 0;

    /// <summary>Step 3.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal void Exit() => Volatile.Write(ref _taken, 0);

    /// <summary>
    /// Enters for a <c>using</c> block, which exits even if the section throws (an allocation that
    /// fails, say): a spin lock left held would stall every later caller forever.
    /// </summary>
    [UnscopedRef]
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal Scope EnterScope()
    {
        Enter();
        return new Scope(ref this);
    }

    /// <summary>A held <see cref="TinyLock"/>; disposing it exits.</summary>
    internal readonly ref struct Scope
    {
        private readonly ref TinyLock _lock;

        internal Scope(ref TinyLock held) => _lock = ref held;

        public void Dispose() => _lock.Exit();
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private void EnterContended()
    {
        var spinner = default(SpinWait);
        do
        {
            spinner.SpinOnce();
        }
        while (Volatile.Read(ref _taken) != 0 || Interlocked.CompareExchange(ref _taken, 1, 0) != 0);
    }
}
