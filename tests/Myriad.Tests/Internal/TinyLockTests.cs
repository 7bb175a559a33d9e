using System;
using Myriad.Internal;
using Xunit;

namespace Myriad.Tests.Internal;

public class TinyLockTests
{
    private sealed class Holder
    {
        public TinyLock Lock;
    }

    [Fact]
    public void EnterScope_Disposed_ReleasesTheLock()
    {
        var holder = new Holder();
        using (holder.Lock.EnterScope())
        {
            Assert.True(holder.Lock.IsHeld);
        }

        Assert.False(holder.Lock.IsHeld);
    }

    private static void ThrowInside(Holder holder)
    {
        using (holder.Lock.EnterScope())
        {
            throw new InvalidOperationException("inside");
        }
    }

    [Fact]
    public void EnterScope_SectionThrows_StillReleasesTheLock()
    {
        var holder = new Holder();
        Assert.Throws<InvalidOperationException>(() => ThrowInside(holder));
        Assert.False(holder.Lock.IsHeld);
    }
}
