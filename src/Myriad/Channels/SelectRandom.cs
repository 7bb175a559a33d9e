using System;
using System.Runtime.CompilerServices;

namespace Myriad.Channels;

/// <summary>
/// The random numbers behind select's poll order: a per-thread xorshift64 generator. Select draws
/// one number per case per select, so it must cost a few instructions; <see cref="Random.Shared"/>
/// costs a virtual call and a slower thread-static lookup each time.
/// </summary>
/// <remarks>
/// Quality needed: uniform choice among a handful of ready cases. xorshift64 (Marsaglia, 2003) passes
/// that easily; a bounded value is taken from the high 32 bits by multiply-shift (Lemire, 2019), whose
/// bias for a bound n is at most n / 2^32, far below anything a test or a program could observe.
/// Each thread seeds from <see cref="Random.Shared"/> on first use. While a
/// <see cref="Scheduling.DeterministicRuntime"/> drives a thread, the thread's state is the runtime's
/// own (swapped in and out by <see cref="Swap"/> when the drive starts and ends), so that select's
/// choices are a function of the runtime's seed and replay with it; nothing else pays for that.
/// </remarks>
internal static class SelectRandom
{
    [ThreadStatic] private static ulong t_state;

    /// <summary>A value in [0, <paramref name="bound"/>).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static int Next(int bound)
    {
        ulong x = t_state;
        if (x == 0)
        {
            x = (ulong)Random.Shared.NextInt64() | 1; // xorshift's state must never be zero
        }

        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        t_state = x;
        return (int)(((x >> 32) * (ulong)(uint)bound) >> 32);
    }

    /// <summary>Installs <paramref name="state"/> as the calling thread's generator state and returns the previous one (zero: not seeded yet).</summary>
    internal static ulong Swap(ulong state)
    {
        ulong previous = t_state;
        t_state = state;
        return previous;
    }

    /// <summary>A non-zero generator state derived from <paramref name="seed"/> (splitmix64's finalizer, so that nearby seeds start far apart).</summary>
    internal static ulong StateFromSeed(int seed)
    {
        ulong z = unchecked((ulong)seed * 0x9E3779B97F4A7C15UL + 0x6A09E667F3BCC909UL);
        z = unchecked((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9UL);
        z = unchecked((z ^ (z >> 27)) * 0x94D049BB133111EBUL);
        return (z ^ (z >> 31)) | 1;
    }
}
