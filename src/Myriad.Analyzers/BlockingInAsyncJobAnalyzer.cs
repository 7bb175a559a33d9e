using System.Collections.Immutable;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.Diagnostics;
using Microsoft.CodeAnalysis.Operations;

namespace Myriad.Analyzers;

/// <summary>
/// MYR0003: <c>Wait()</c> on a job or task, <c>.Result</c> of a task, or
/// <c>GetAwaiter().GetResult()</c> directly inside an <c>async Job</c> or <c>async Job&lt;T&gt;</c>
/// method, lambda or local function. A non-async function nested inside one is not reported: it
/// may run anywhere.
/// </summary>
[DiagnosticAnalyzer(LanguageNames.CSharp)]
public sealed class BlockingInAsyncJobAnalyzer : MyriadAnalyzer
{
    /// <inheritdoc/>
    public override ImmutableArray<DiagnosticDescriptor> SupportedDiagnostics => ImmutableArray.Create(Descriptors.BlockingInAsyncJob);

    /// <inheritdoc/>
    private protected override void Register(CompilationStartAnalysisContext start, MyriadTypes types)
    {
        start.RegisterOperationAction(c => AnalyzeInvocation(c, types), OperationKind.Invocation);
        start.RegisterOperationAction(c => AnalyzeProperty(c, types), OperationKind.PropertyReference);
    }

    private static void AnalyzeInvocation(OperationAnalysisContext context, MyriadTypes types)
    {
        var call = (IInvocationOperation)context.Operation;
        string? what = call.TargetMethod.Name switch
        {
            "Wait" when types.IsJob(call.TargetMethod.ContainingType) || types.IsTaskLike(call.TargetMethod.ContainingType) => "Wait()",
            "GetResult" when call.Instance is IInvocationOperation { TargetMethod.Name: "GetAwaiter" } => "GetAwaiter().GetResult()",
            _ => null,
        };
        Report(context, types, what);
    }

    private static void AnalyzeProperty(OperationAnalysisContext context, MyriadTypes types)
    {
        var property = (IPropertyReferenceOperation)context.Operation;
        if (property.Property.Name != "Result" || property.Instance is null)
        {
            return;
        }

        INamedTypeSymbol container = property.Property.ContainingType.OriginalDefinition;
        if (SymbolEqualityComparer.Default.Equals(container, types.TaskOfT) || SymbolEqualityComparer.Default.Equals(container, types.ValueTaskOfT))
        {
            Report(context, types, ".Result");
        }
    }

    private static void Report(OperationAnalysisContext context, MyriadTypes types, string? what)
    {
        if (what is null
            || MyriadTypes.ContainingFunction(context.Operation, context.ContainingSymbol) is not { IsAsync: true } function
            || !types.IsJob(function.ReturnType))
        {
            return;
        }

        context.ReportDiagnostic(Diagnostic.Create(Descriptors.BlockingInAsyncJob, context.Operation.Syntax.GetLocation(), what));
    }
}
