using System.Threading.Tasks;

namespace Myriad.Compare.Experiments;

/// <summary>E1: <c>n &lt;= 0 ? 0 : 1 + await Count(n - 1)</c>, each variant on a thread with a 1 MiB stack.</summary>
internal static class Recursion
{
    /// <summary>Plain <c>async Task&lt;int&gt;</c>: every level completes synchronously, so every level is real stack.</summary>
    public static long Tpl(Case c) => Hosts.OnThread(() => TplCount(checked((int)c.N)).GetAwaiter().GetResult());

    /// <summary>The published workaround: each level is queued to the thread pool with StartNew(...).Unwrap().</summary>
    public static long TplDeferred(Case c) => Hosts.OnThread(() => DeferredCount(checked((int)c.N)).GetAwaiter().GetResult());

    /// <summary><c>async Job&lt;long&gt;</c>: Myriad's trampoline defers the start of deep levels.</summary>
    public static long Myriad(Case c) => Hosts.OnThread(() => MyriadCount(c.N).Wait());

    private static async Task<int> TplCount(int n) => n <= 0 ? 0 : 1 + await TplCount(n - 1);

    private static async Task<int> DeferredCount(int n) =>
        n <= 0 ? 0 : 1 + await Task.Factory.StartNew(static s => DeferredCount((int)s! - 1), n).Unwrap();

    private static async Job<long> MyriadCount(long n) => n <= 0 ? 0 : 1 + await MyriadCount(n - 1);
}
