using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.Operations;

namespace Myriad.Analyzers;

/// <summary>The Myriad and BCL types the rules look for, resolved once per compilation.</summary>
internal sealed class MyriadTypes
{
    private MyriadTypes(Compilation compilation, INamedTypeSymbol job, INamedTypeSymbol jobOfT)
    {
        Job = job;
        JobOfT = jobOfT;
        JobRuntime = compilation.GetTypeByMetadataName("Myriad.Scheduling.JobRuntime");
        Task = compilation.GetTypeByMetadataName("System.Threading.Tasks.Task");
        TaskOfT = compilation.GetTypeByMetadataName("System.Threading.Tasks.Task`1");
        ValueTask = compilation.GetTypeByMetadataName("System.Threading.Tasks.ValueTask");
        ValueTaskOfT = compilation.GetTypeByMetadataName("System.Threading.Tasks.ValueTask`1");
    }

    public INamedTypeSymbol Job { get; }

    public INamedTypeSymbol JobOfT { get; }

    public INamedTypeSymbol? JobRuntime { get; }

    public INamedTypeSymbol? Task { get; }

    public INamedTypeSymbol? TaskOfT { get; }

    public INamedTypeSymbol? ValueTask { get; }

    public INamedTypeSymbol? ValueTaskOfT { get; }

    /// <summary>Null when the compilation does not reference Myriad: the rules then stay silent.</summary>
    public static MyriadTypes? TryCreate(Compilation compilation)
    {
        INamedTypeSymbol? job = compilation.GetTypeByMetadataName("Myriad.Job");
        INamedTypeSymbol? jobOfT = compilation.GetTypeByMetadataName("Myriad.Job`1");
        return job is null || jobOfT is null ? null : new MyriadTypes(compilation, job, jobOfT);
    }

    /// <summary>Whether <paramref name="type"/> is <c>Job</c> or a <c>Job&lt;T&gt;</c>.</summary>
    public bool IsJob(ITypeSymbol? type) =>
        type is INamedTypeSymbol named
        && (SymbolEqualityComparer.Default.Equals(named, Job)
            || SymbolEqualityComparer.Default.Equals(named.OriginalDefinition, JobOfT));

    /// <summary>Whether <paramref name="type"/> is <c>Job</c>, <c>Job&lt;T&gt;</c> or a nullable of one (from <c>?.</c>).</summary>
    public bool IsJobOrNullableJob(ITypeSymbol? type) =>
        IsJob(type)
        || (type is INamedTypeSymbol { OriginalDefinition.SpecialType: SpecialType.System_Nullable_T } nullable
            && IsJob(nullable.TypeArguments[0]));

    /// <summary>Whether <paramref name="type"/> is <see cref="JobRuntime"/> or derives from it.</summary>
    public bool IsRuntime(ITypeSymbol? type)
    {
        for (ITypeSymbol? t = type; t is not null; t = t.BaseType)
        {
            if (SymbolEqualityComparer.Default.Equals(t, JobRuntime))
            {
                return true;
            }
        }

        return false;
    }

    /// <summary>Whether <paramref name="call"/> is a runtime's <c>Spawn</c>, <c>SpawnDetached</c> or <c>Run</c>, whose <c>Action</c> overloads take a synchronous body.</summary>
    public bool IsSpawnOrRun(IInvocationOperation call) =>
        call.TargetMethod.Name is "Spawn" or "SpawnDetached" or "Run" && IsRuntime(call.TargetMethod.ContainingType);

    public bool IsTaskLike(ITypeSymbol? type) =>
        type is INamedTypeSymbol named
        && (SymbolEqualityComparer.Default.Equals(named, Task)
            || SymbolEqualityComparer.Default.Equals(named.OriginalDefinition, TaskOfT));

    /// <summary>
    /// The function whose body <paramref name="operation"/> is in: the innermost lambda or local
    /// function, else the member being analyzed.
    /// </summary>
    public static IMethodSymbol? ContainingFunction(IOperation operation, ISymbol containingSymbol)
    {
        for (IOperation? o = operation.Parent; o is not null; o = o.Parent)
        {
            switch (o)
            {
                case IAnonymousFunctionOperation lambda:
                    return lambda.Symbol;
                case ILocalFunctionOperation local:
                    return local.Symbol;
            }
        }

        return containingSymbol as IMethodSymbol;
    }
}
