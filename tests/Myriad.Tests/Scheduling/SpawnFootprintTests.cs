using Myriad.Coordination;
using Myriad.Jobs;
using Myriad.Scheduling;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.Scheduling;

/// <summary>
/// What a queued or pending spawn costs on the heap. A million of them at once is the workload Myriad
/// is for (a million sleepers started in a loop, a million-link spawned chain), and each byte of
/// them is copied by every collection they survive, so the sizes the docs quote are checked here.
/// </summary>
public sealed class SpawnFootprintTests
{
    [Fact]
    public void DetachedSpawn_With24BytesOfState_Takes64Bytes()
    {
        // The state of the sleepers experiment: an array, an index and a wait group.
        Assert.Equal(64, ObjectLayout.InstanceSize(typeof(DetachedSpawn<(long[], int, WaitGroup)>)));
    }

    [Fact]
    public void SpawnBox_WithAJobAsState_Takes80Bytes()
    {
        // A spawned link of a chain: its state is the previous link's handle.
        Assert.Equal(80, ObjectLayout.InstanceSize(typeof(SpawnBox<Job<int>, int>)));
    }

    [Fact]
    public void DelayCell_Pending_Takes64Bytes()
    {
        // The only object of a pending Job.Delay without a cancelable token.
        Assert.Equal(64, ObjectLayout.InstanceSize(typeof(DelayCell)));
    }
}
