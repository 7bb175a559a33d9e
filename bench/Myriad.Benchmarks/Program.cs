using BenchmarkDotNet.Running;

namespace Myriad.Benchmarks;

/// <summary>
/// Micro-benchmarks of Myriad against the TPL. Examples:
///   dotnet run -c Release --project bench/Myriad.Benchmarks -- --filter '*'              (default job)
///   dotnet run -c Release --project bench/Myriad.Benchmarks -- --filter '*' --job short  (minutes)
///   dotnet run -c Release --project bench/Myriad.Benchmarks -- --list flat
/// MemoryDiagnoser and ThreadingDiagnoser are on for every class (BenchConfig).
/// </summary>
public static class Program
{
    public static void Main(string[] args) => BenchmarkSwitcher.FromAssembly(typeof(Program).Assembly).Run(args);
}
