using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.Diagnostics;

namespace Myriad.Analyzers;

/// <summary>
/// What every Myriad rule does first: skip generated code, run concurrently, and register its actions
/// only in a compilation that references Myriad (<see cref="MyriadTypes.TryCreate"/>), with the types
/// it looks for resolved once.
/// </summary>
public abstract class MyriadAnalyzer : DiagnosticAnalyzer
{
    /// <inheritdoc/>
    public sealed override void Initialize(AnalysisContext context)
    {
        context.ConfigureGeneratedCodeAnalysis(GeneratedCodeAnalysisFlags.None);
        context.EnableConcurrentExecution();
        context.RegisterCompilationStartAction(start =>
        {
            if (MyriadTypes.TryCreate(start.Compilation) is { } types)
            {
                Register(start, types);
            }
        });
    }

    /// <summary>Registers the rule's actions for a compilation that references Myriad.</summary>
    private protected abstract void Register(CompilationStartAnalysisContext start, MyriadTypes types);
}
