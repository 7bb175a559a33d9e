using System.Collections.Immutable;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.Diagnostics;
using Microsoft.CodeAnalysis.Operations;

namespace Myriad.Analyzers;

/// <summary>
/// MYR0005: a non-async lambda passed as the synchronous body (<c>Action</c>, <c>Action&lt;TState&gt;</c>)
/// of a runtime's <c>Spawn</c>, <c>SpawnDetached</c> or <c>Run</c>, with a statement that is a call
/// returning a <c>Task</c>, <c>ValueTask</c>, a job, or their generic and nullable forms:
/// <c>rt.Spawn(() => client.PostAsync(...))</c>, <c>rt.Spawn(() => service?.RunAsync())</c>.
/// The compiler converts it to the Action without a word (the value of an expression statement may be
/// dropped), where <c>Task.Run</c> would have taken it as a <c>Func&lt;Task&gt;</c> and waited. An
/// explicit discard (<c>_ = FooAsync()</c>) is not reported: it says the drop is meant.
/// </summary>
[DiagnosticAnalyzer(LanguageNames.CSharp)]
public sealed class DiscardedAwaitableAnalyzer : MyriadAnalyzer
{
    /// <inheritdoc/>
    public override ImmutableArray<DiagnosticDescriptor> SupportedDiagnostics => ImmutableArray.Create(Descriptors.DiscardedAwaitable);

    /// <inheritdoc/>
    private protected override void Register(CompilationStartAnalysisContext start, MyriadTypes types)
    {
        start.RegisterOperationAction(c => AnalyzeInvocation(c, types), OperationKind.Invocation);
    }

    private static void AnalyzeInvocation(OperationAnalysisContext context, MyriadTypes types)
    {
        var call = (IInvocationOperation)context.Operation;
        if (!types.IsSpawnOrRun(call))
        {
            return;
        }

        foreach (IArgumentOperation argument in call.Arguments)
        {
            if (argument.Parameter?.Type is not INamedTypeSymbol { TypeKind: TypeKind.Delegate, DelegateInvokeMethod: { ReturnsVoid: true } } delegateType
                || argument.Value is not IDelegateCreationOperation { Target: IAnonymousFunctionOperation { Symbol.IsAsync: false } lambda })
            {
                continue;
            }

            foreach (IOperation statement in lambda.Body.Operations)
            {
                // A call (an assignment, the explicit discard `_ = FooAsync()` included, is not one).
                if (statement is IExpressionStatementOperation { Operation: { Type: { } type } expression }
                    && expression is IInvocationOperation or IConditionalAccessOperation
                    && IsAwaitable(type, types))
                {
                    context.ReportDiagnostic(Diagnostic.Create(
                        Descriptors.DiscardedAwaitable,
                        expression.Syntax.GetLocation(),
                        delegateType.ToDisplayString(SymbolDisplayFormat.MinimallyQualifiedFormat),
                        type.ToDisplayString(SymbolDisplayFormat.MinimallyQualifiedFormat),
                        expression.Syntax.ToString()));
                }
            }
        }
    }

    // A job too: `() => svc?.RunAsync()` (a Job?) or a Job<T> passed to SpawnDetached match no job form.
    private static bool IsAwaitable(ITypeSymbol type, MyriadTypes types) =>
        types.IsTaskLike(type)
        || types.IsJobOrNullableJob(type)
        || SymbolEqualityComparer.Default.Equals(type, types.ValueTask)
        || (type is INamedTypeSymbol named && SymbolEqualityComparer.Default.Equals(named.OriginalDefinition, types.ValueTaskOfT));
}
