using System.Collections.Immutable;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.Diagnostics;
using Microsoft.CodeAnalysis.Operations;

namespace Myriad.Analyzers;

/// <summary>
/// MYR0003: <c>Wait()</c> on a job or task, <c>.Result</c> of a task, <c>GetAwaiter().GetResult()</c>,
/// <c>Task.WaitAll</c>/<c>Task.WaitAny</c> or <c>Thread.Sleep</c> directly inside an <c>async Job</c>
/// or <c>async Job&lt;T&gt;</c> method, lambda or local function. A non-async function nested inside
/// one is not reported: it may run anywhere. Not reported either, since they do not block: a
/// <c>Wait(0)</c> poll, and the <c>.Result</c> of a task that the function already awaited (itself,
/// or through an awaited <c>Task.WhenAll</c>/<c>WhenAny</c>) or reads inside a branch that checked
/// it completed (<c>if (t.IsCompletedSuccessfully) return t.Result;</c>).
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
        INamedTypeSymbol container = call.TargetMethod.ContainingType;
        string? what = call.TargetMethod.Name switch
        {
            "Wait" when (types.IsJob(container) || types.IsTaskLike(container)) && !IsPoll(call) => "Wait()",
            "GetResult" when call.Instance is IInvocationOperation { TargetMethod.Name: "GetAwaiter" } => "GetAwaiter().GetResult()",
            "WaitAll" or "WaitAny" when call.Instance is null && SymbolEqualityComparer.Default.Equals(container, types.Task) => $"Task.{call.TargetMethod.Name}()",
            "Sleep" when call.Instance is null && container.Name == "Thread" && container.ContainingNamespace?.ToDisplayString() == "System.Threading" => "Thread.Sleep()",
            _ => null,
        };
        if (what is not null && IsInAsyncJob(context, types))
        {
            Report(context, what);
        }
    }

    /// <summary><c>t.Wait(0)</c>: asks whether the task completed, never blocks.</summary>
    private static bool IsPoll(IInvocationOperation call) =>
        call.Arguments.Length == 1 && call.Arguments[0].Value.ConstantValue is { HasValue: true, Value: 0 };

    private static void AnalyzeProperty(OperationAnalysisContext context, MyriadTypes types)
    {
        var property = (IPropertyReferenceOperation)context.Operation;
        if (property.Property.Name != "Result" || property.Instance is null)
        {
            return;
        }

        // The walks of IsKnownCompleted only inside an async Job, where the read would be reported.
        INamedTypeSymbol container = property.Property.ContainingType.OriginalDefinition;
        if ((SymbolEqualityComparer.Default.Equals(container, types.TaskOfT) || SymbolEqualityComparer.Default.Equals(container, types.ValueTaskOfT))
            && IsInAsyncJob(context, types)
            && !IsKnownCompleted(property.Instance))
        {
            Report(context, ".Result");
        }
    }

    /// <summary>
    /// Whether the task whose <c>.Result</c> is read is a local, parameter or field that the code
    /// before the read awaited (alone, or as an argument of an awaited <c>WhenAll</c>/<c>WhenAny</c>), or
    /// that an enclosing <c>if</c> or conditional checked for completion: reading it does not block.
    /// </summary>
    private static bool IsKnownCompleted(IOperation instance)
    {
        ISymbol? task = SymbolOf(instance);
        if (task is null)
        {
            return false;
        }

        // An enclosing branch guarded by t.IsCompleted / t.IsCompletedSuccessfully (not the condition
        // itself: the path up from the read does not come through it).
        IOperation child = instance;
        for (IOperation? node = instance.Parent; node is not null; child = node, node = node.Parent)
        {
            if (node is IConditionalOperation conditional && conditional.Condition != child && ChecksCompletion(conditional.Condition, task))
            {
                return true;
            }
        }

        // An await earlier in the same function body.
        IOperation root = instance;
        while (root.Parent is not null)
        {
            root = root.Parent;
        }

        int position = instance.Syntax.SpanStart;
        foreach (IOperation node in root.DescendantsAndSelf())
        {
            if (node is IAwaitOperation awaited && awaited.Syntax.Span.End <= position && Awaits(awaited.Operation, task))
            {
                return true;
            }
        }

        return false;
    }

    private static bool Awaits(IOperation awaited, ISymbol task)
    {
        awaited = Unwrap(awaited);
        if (SymbolEqualityComparer.Default.Equals(SymbolOf(awaited), task))
        {
            return true;
        }

        // await Task.WhenAll(a, b) / WhenAny(a, b), or .ConfigureAwait(...) around it.
        if (awaited is IInvocationOperation { TargetMethod.Name: "ConfigureAwait", Instance: { } configured })
        {
            return Awaits(configured, task);
        }

        if (awaited is IInvocationOperation { TargetMethod.Name: "WhenAll" or "WhenAny" } combinator)
        {
            foreach (IArgumentOperation argument in combinator.Arguments)
            {
                foreach (IOperation element in argument.Value.DescendantsAndSelf())
                {
                    if (SymbolEqualityComparer.Default.Equals(SymbolOf(Unwrap(element)), task))
                    {
                        return true;
                    }
                }
            }
        }

        return false;
    }

    private static bool ChecksCompletion(IOperation condition, ISymbol task)
    {
        foreach (IOperation node in condition.DescendantsAndSelf())
        {
            if (node is IPropertyReferenceOperation { Property.Name: "IsCompleted" or "IsCompletedSuccessfully", Instance: { } checkedTask }
                && SymbolEqualityComparer.Default.Equals(SymbolOf(Unwrap(checkedTask)), task))
            {
                return true;
            }
        }

        return false;
    }

    private static IOperation Unwrap(IOperation operation)
    {
        while (operation is IConversionOperation { Operand: { } operand })
        {
            operation = operand;
        }

        return operation;
    }

    private static ISymbol? SymbolOf(IOperation operation) => Unwrap(operation) switch
    {
        ILocalReferenceOperation local => local.Local,
        IParameterReferenceOperation parameter => parameter.Parameter,
        IFieldReferenceOperation field => field.Field,
        _ => null,
    };

    private static bool IsInAsyncJob(OperationAnalysisContext context, MyriadTypes types) =>
        MyriadTypes.ContainingFunction(context.Operation, context.ContainingSymbol) is { IsAsync: true } function && types.IsJob(function.ReturnType);

    private static void Report(OperationAnalysisContext context, string what) =>
        context.ReportDiagnostic(Diagnostic.Create(Descriptors.BlockingInAsyncJob, context.Operation.Syntax.GetLocation(), what));
}
