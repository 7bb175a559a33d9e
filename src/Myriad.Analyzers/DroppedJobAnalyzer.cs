using System.Collections.Generic;
using System.Collections.Immutable;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.Diagnostics;
using Microsoft.CodeAnalysis.Operations;

namespace Myriad.Analyzers;

/// <summary>
/// MYR0001: a job that is discarded (<c>Foo();</c>, <c>_ = Foo();</c>) or stored in a local that
/// is never read. The only fire-and-forget forms are <c>SpawnDetached</c> and <c>Detach</c>, which
/// return nothing, so any dropped <c>Job</c> value is a lost failure.
/// </summary>
[DiagnosticAnalyzer(LanguageNames.CSharp)]
public sealed class DroppedJobAnalyzer : MyriadAnalyzer
{
    /// <summary>Tells the code fix which form was found.</summary>
    internal const string KindProperty = "Kind";

    internal const string DiscardedKind = "Discarded";

    internal const string UnreadLocalKind = "UnreadLocal";

    /// <inheritdoc/>
    public override ImmutableArray<DiagnosticDescriptor> SupportedDiagnostics => ImmutableArray.Create(Descriptors.DroppedJob);

    /// <inheritdoc/>
    private protected override void Register(CompilationStartAnalysisContext start, MyriadTypes types)
    {
        start.RegisterOperationAction(c => AnalyzeStatement(c, types), OperationKind.ExpressionStatement);
        start.RegisterOperationBlockAction(c => AnalyzeLocals(c, types));
    }

    private static void AnalyzeStatement(OperationAnalysisContext context, MyriadTypes types)
    {
        IOperation expression = ((IExpressionStatementOperation)context.Operation).Operation;
        IOperation dropped;
        switch (expression)
        {
            case ISimpleAssignmentOperation { Target: IDiscardOperation } discard:
                dropped = discard.Value;
                break;
            case IInvocationOperation or IAwaitOperation or IConditionalAccessOperation or IObjectCreationOperation:
                dropped = expression;
                break;
            default:
                return; // assignments, increments... store or compute, they drop nothing
        }

        while (dropped is IConversionOperation { IsImplicit: true } conversion)
        {
            dropped = conversion.Operand;
        }

        // A call dropped by a synchronous spawn body is MYR0005's (the forms it reports).
        if (!types.IsJobOrNullableJob(dropped.Type)
            || (expression is IInvocationOperation or IConditionalAccessOperation && dropped == expression && IsSynchronousSpawnBodyStatement(context.Operation, types)))
        {
            return;
        }

        string what = dropped is IInvocationOperation invocation
            ? $"The job returned by '{invocation.TargetMethod.Name}' is discarded"
            : "A job is discarded";
        ImmutableDictionary<string, string?> properties = ImmutableDictionary<string, string?>.Empty.Add(KindProperty, DiscardedKind);
        context.ReportDiagnostic(Diagnostic.Create(Descriptors.DroppedJob, dropped.Syntax.GetLocation(), properties, what));
    }

    /// <summary>
    /// A statement of a non-async lambda passed as the synchronous body of a runtime's <c>Spawn</c>,
    /// <c>SpawnDetached</c> or <c>Run</c>: MYR0005 reports a job dropped there, with the advice that
    /// fits (make the body async), and one report per mistake is enough.
    /// </summary>
    private static bool IsSynchronousSpawnBodyStatement(IOperation statement, MyriadTypes types) =>
        statement.Parent is IBlockOperation { Parent: IAnonymousFunctionOperation { Symbol.IsAsync: false } lambda }
        && lambda.Parent is IDelegateCreationOperation { Parent: IArgumentOperation { Parameter.Type: INamedTypeSymbol { DelegateInvokeMethod.ReturnsVoid: true } } argument }
        && argument.Parent is IInvocationOperation call
        && types.IsSpawnOrRun(call);

    /// <summary>A job local that is assigned but never read.</summary>
    private static void AnalyzeLocals(OperationBlockAnalysisContext context, MyriadTypes types)
    {
        var assigned = new Dictionary<ILocalSymbol, SyntaxNode>(SymbolEqualityComparer.Default);
        var read = new HashSet<ILocalSymbol>(SymbolEqualityComparer.Default);
        foreach (IOperation block in context.OperationBlocks)
        {
            foreach (IOperation operation in block.Descendants())
            {
                switch (operation)
                {
                    case IVariableDeclaratorOperation { Initializer: not null } declarator when types.IsJob(declarator.Symbol.Type):
                        if (!assigned.ContainsKey(declarator.Symbol))
                        {
                            assigned.Add(declarator.Symbol, declarator.Syntax);
                        }

                        break;
                    case ILocalReferenceOperation reference when types.IsJob(reference.Local.Type):
                        if (reference.Parent is ISimpleAssignmentOperation assignment && assignment.Target == reference)
                        {
                            if (!assigned.ContainsKey(reference.Local))
                            {
                                assigned.Add(reference.Local, reference.Syntax);
                            }
                        }
                        else
                        {
                            read.Add(reference.Local);
                        }

                        break;
                }
            }
        }

        foreach (KeyValuePair<ILocalSymbol, SyntaxNode> entry in assigned)
        {
            if (!read.Contains(entry.Key))
            {
                ImmutableDictionary<string, string?> properties = ImmutableDictionary<string, string?>.Empty.Add(KindProperty, UnreadLocalKind);
                Location location = entry.Key.Locations.Length > 0 ? entry.Key.Locations[0] : entry.Value.GetLocation();
                context.ReportDiagnostic(Diagnostic.Create(Descriptors.DroppedJob, location, properties, $"Job local '{entry.Key.Name}' is never read"));
            }
        }
    }
}
