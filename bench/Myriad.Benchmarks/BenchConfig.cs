using System.Collections.Generic;
using System.Linq;
using BenchmarkDotNet.Analysers;
using BenchmarkDotNet.Configs;
using BenchmarkDotNet.Diagnosers;
using BenchmarkDotNet.Engines;
using BenchmarkDotNet.Exporters;
using BenchmarkDotNet.Loggers;
using BenchmarkDotNet.Reports;
using BenchmarkDotNet.Running;
using BenchmarkDotNet.Validators;

namespace Myriad.Benchmarks;

/// <summary>
/// The suite's config: MemoryDiagnoser and ThreadingDiagnoser on every class (the default exporters include GitHub markdown).
/// Run length comes from the command line (<c>--job short</c> for a run of minutes).
/// </summary>
public sealed class BenchConfig : ManualConfig
{
    public BenchConfig()
    {
        AddDiagnoser(MemoryDiagnoser.Default);
        AddDiagnoser(new Net10ThreadingDiagnoser());
    }
}

/// <summary>
/// <see cref="ThreadingDiagnoser"/> as is, minus its runtime check: BenchmarkDotNet 0.14.0 (the newest
/// version this machine's registry has) does not recognize .NET 10 and rejects the diagnoser with
/// "supports only .NET Core 3.0+". The counters it reads (ThreadPool.CompletedWorkItemCount,
/// Monitor.LockContentionCount) exist on .NET 10, so everything else is delegated unchanged.
/// </summary>
internal sealed class Net10ThreadingDiagnoser : IDiagnoser
{
    private readonly IDiagnoser _inner = ThreadingDiagnoser.Default;

    public IEnumerable<string> Ids => _inner.Ids;

    public IEnumerable<IExporter> Exporters => _inner.Exporters;

    public IEnumerable<IAnalyser> Analysers => _inner.Analysers;

    public RunMode GetRunMode(BenchmarkCase benchmarkCase) => _inner.GetRunMode(benchmarkCase);

    public void Handle(HostSignal signal, DiagnoserActionParameters parameters) => _inner.Handle(signal, parameters);

    public IEnumerable<Metric> ProcessResults(DiagnoserResults results) => _inner.ProcessResults(results);

    public void DisplayResults(ILogger logger) => _inner.DisplayResults(logger);

    public IEnumerable<ValidationError> Validate(ValidationParameters validationParameters) => Enumerable.Empty<ValidationError>();
}
