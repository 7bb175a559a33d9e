using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;

namespace Myriad.Tests.Support;

/// <summary>
/// Objects whose identity hash codes are equal. The runtime keeps 26 bits of an identity hash code, so
/// a collision turns up after some thousands of objects (birthday bound); the search is cheap.
/// </summary>
internal static class HashCollisions
{
    /// <summary>Two distinct objects made by <paramref name="create"/> with equal <see cref="RuntimeHelpers.GetHashCode(object)"/>.</summary>
    internal static (T First, T Second) Pair<T>(Func<T> create)
        where T : class
    {
        var byCode = new Dictionary<int, T>();
        for (int made = 0; made < 10_000_000; made++)
        {
            T candidate = create();
            int code = RuntimeHelpers.GetHashCode(candidate);
            if (byCode.TryGetValue(code, out T? earlier))
            {
                return (earlier, candidate);
            }

            byCode.Add(code, candidate);
        }

        throw new InvalidOperationException("no identity hash code collision among 10 million objects");
    }
}
