using System.Collections.Generic;
using System.Collections.Immutable;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.Diagnostics;
using Microsoft.CodeAnalysis.FlowAnalysis;
using Microsoft.CodeAnalysis.Operations;

namespace Myriad.Analyzers;

/// <summary>
/// MYR0002: a job local or parameter consumed (awaited, also through <c>ConfigureAwait</c>,
/// waited on, turned into a Task or ValueTask, handed to <c>Detach</c>, <c>WhenAll</c> or
/// <c>WhenAny</c>) on a path where it was already consumed and not reassigned since (by an
/// assignment, an <c>out</c> argument or a pattern that declares it).
/// </summary>
/// <remarks>
/// Works on the control-flow graph, so consumptions in the two arms of an <c>if</c>, or one
/// followed by a <c>return</c>, are not reported, while one inside a loop is. Exception edges are
/// not in the graph (a consumption in a <c>catch</c> after one in the <c>try</c> is missed), and a
/// variable that a lambda or local function also uses is skipped: its writes there are invisible.
/// </remarks>
[DiagnosticAnalyzer(LanguageNames.CSharp)]
public sealed class DoubleConsumptionAnalyzer : MyriadAnalyzer
{
    // ConfigureAwait and GetAwaiter do not consume by themselves, but what they return is only
    // ever there to be awaited, which consumes the job they wrap.
    private static readonly ImmutableHashSet<string> s_consumingMethods =
        ImmutableHashSet.Create("AsTask", "AsValueTask", "Wait", "WaitAsync", "AsJob", "GetAwaiter", "ConfigureAwait");

    private static readonly ImmutableHashSet<string> s_consumingJobStatics = ImmutableHashSet.Create("WhenAll", "WhenAny");

    /// <inheritdoc/>
    public override ImmutableArray<DiagnosticDescriptor> SupportedDiagnostics => ImmutableArray.Create(Descriptors.DoubleConsumption);

    /// <inheritdoc/>
    private protected override void Register(CompilationStartAnalysisContext start, MyriadTypes types)
    {
        start.RegisterOperationAction(
            c =>
            {
                // Most methods of a project hold no job variable at all: a walk of the body is much
                // cheaper than the control-flow graph built for the ones that do.
                if (!ReferencesJobVariable(c.Operation, types))
                {
                    return;
                }

                ControlFlowGraph graph = c.Operation is IMethodBodyOperation body
                    ? ControlFlowGraph.Create(body, c.CancellationToken)
                    : ControlFlowGraph.Create((IConstructorBodyOperation)c.Operation, c.CancellationToken);
                AnalyzeGraph(c, types, graph);
            },
            OperationKind.MethodBody,
            OperationKind.ConstructorBody);
    }

    /// <summary>Whether <paramref name="body"/> (nested functions included) reads or writes a local or parameter of a job type.</summary>
    private static bool ReferencesJobVariable(IOperation body, MyriadTypes types)
    {
        foreach (IOperation operation in body.Descendants())
        {
            if ((operation is ILocalReferenceOperation local && types.IsJob(local.Local.Type))
                || (operation is IParameterReferenceOperation parameter && types.IsJob(parameter.Parameter.Type)))
            {
                return true;
            }
        }

        return false;
    }

    private enum EventKind
    {
        Consume,
        Write,
    }

    private readonly struct Event(EventKind kind, ISymbol symbol, IOperation operation, string how)
    {
        public EventKind Kind { get; } = kind;

        public ISymbol Symbol { get; } = symbol;

        public IOperation Operation { get; } = operation;

        public string How { get; } = how;
    }

    private static void AnalyzeGraph(OperationAnalysisContext context, MyriadTypes types, ControlFlowGraph graph)
    {
        // Variables that a nested function touches: their writes there are invisible here.
        var shared = new HashSet<ISymbol>(SymbolEqualityComparer.Default);
        var nested = new List<ControlFlowGraph>();
        foreach (IMethodSymbol local in graph.LocalFunctions)
        {
            nested.Add(graph.GetLocalFunctionControlFlowGraph(local, context.CancellationToken));
        }

        var events = new List<Event>[graph.Blocks.Length];
        for (int i = 0; i < graph.Blocks.Length; i++)
        {
            events[i] = new List<Event>();
            BasicBlock block = graph.Blocks[i];
            foreach (IOperation statement in block.Operations)
            {
                Collect(statement, types, events[i], graph, nested, shared, context);
            }

            if (block.BranchValue is not null)
            {
                Collect(block.BranchValue, types, events[i], graph, nested, shared, context);
            }
        }

        foreach (ControlFlowGraph inner in nested)
        {
            foreach (BasicBlock block in inner.Blocks)
            {
                foreach (IOperation statement in block.Operations)
                {
                    MarkReferenced(statement, shared);
                }
            }

            AnalyzeGraph(context, types, inner);
        }

        var reported = new HashSet<SyntaxNode>();
        for (int b = 0; b < events.Length; b++)
        {
            for (int e = 0; e < events[b].Count; e++)
            {
                Event first = events[b][e];
                if (first.Kind == EventKind.Consume && !shared.Contains(first.Symbol))
                {
                    FindLaterConsumption(context, graph, events, b, e, first, reported);
                }
            }
        }
    }

    /// <summary>Searches forward from event <paramref name="start"/> of block <paramref name="startBlock"/> for a second consumption.</summary>
    private static void FindLaterConsumption(OperationAnalysisContext context, ControlFlowGraph graph, List<Event>[] events, int startBlock, int start, Event first, HashSet<SyntaxNode> reported)
    {
        var visited = new HashSet<int>();
        var pending = new Stack<int>();
        if (ScanBlock(events[startBlock], start + 1))
        {
            PushSuccessors(graph.Blocks[startBlock], pending);
        }

        while (pending.Count > 0)
        {
            int b = pending.Pop();
            if (!visited.Add(b))
            {
                continue;
            }

            if (ScanBlock(events[b], 0))
            {
                PushSuccessors(graph.Blocks[b], pending);
            }
        }

        // True when the path goes on past the block (no write, no second consumption).
        bool ScanBlock(List<Event> blockEvents, int from)
        {
            for (int i = from; i < blockEvents.Count; i++)
            {
                Event later = blockEvents[i];
                if (!SymbolEqualityComparer.Default.Equals(later.Symbol, first.Symbol))
                {
                    continue;
                }

                if (later.Kind == EventKind.Write)
                {
                    return false;
                }

                if (reported.Add(later.Operation.Syntax))
                {
                    int line = first.Operation.Syntax.GetLocation().GetLineSpan().StartLinePosition.Line + 1;
                    context.ReportDiagnostic(Diagnostic.Create(
                        Descriptors.DoubleConsumption,
                        later.Operation.Syntax.GetLocation(),
                        first.Symbol.Name,
                        $"{first.How} on line {line}"));
                }

                return false;
            }

            return true;
        }
    }

    private static void PushSuccessors(BasicBlock block, Stack<int> pending)
    {
        if (block.FallThroughSuccessor?.Destination is { } fallThrough)
        {
            pending.Push(fallThrough.Ordinal);
        }

        if (block.ConditionalSuccessor?.Destination is { } conditional)
        {
            pending.Push(conditional.Ordinal);
        }
    }

    /// <summary>The consumptions and writes of job variables in one operation, in evaluation order.</summary>
    private static void Collect(IOperation root, MyriadTypes types, List<Event> events, ControlFlowGraph graph, List<ControlFlowGraph> nested, HashSet<ISymbol> shared, OperationAnalysisContext context)
    {
        var writes = new List<Event>();
        foreach (IOperation operation in Self(root))
        {
            if (operation is IFlowAnonymousFunctionOperation lambda)
            {
                nested.Add(graph.GetAnonymousFunctionControlFlowGraphInScope(lambda, context.CancellationToken));
                continue;
            }

            // is Job<int> j, case Job<int> j:, is (true, var j), is { Work: var w }: a pattern
            // designation assigns its local each time the pattern is tested, without a local
            // reference for the code below to see. The local is only readable after the pattern,
            // so the write needs no deferral.
            if (DeclaredByPattern(operation) is { } declared && types.IsJob(declared.Type))
            {
                events.Add(new Event(EventKind.Write, declared, operation, "declared"));
                continue;
            }

            ISymbol? symbol = operation switch
            {
                ILocalReferenceOperation local when types.IsJob(local.Local.Type) => local.Local,
                IParameterReferenceOperation parameter when types.IsJob(parameter.Parameter.Type) => parameter.Parameter,
                _ => null,
            };
            if (symbol is null)
            {
                continue;
            }

            if (IsWrite(operation))
            {
                // The stored value is computed first: a write is ordered after the reads beside it.
                writes.Add(new Event(EventKind.Write, symbol, operation, "written"));
            }
            else if (Consumption(operation, types) is { } how)
            {
                events.Add(new Event(EventKind.Consume, symbol, operation, how));
            }
        }

        events.AddRange(writes);
    }

    /// <summary>The local that <paramref name="operation"/> declares when it is a pattern with a designation.</summary>
    private static ILocalSymbol? DeclaredByPattern(IOperation operation) => operation switch
    {
        IDeclarationPatternOperation declaration => declaration.DeclaredSymbol as ILocalSymbol,
        IRecursivePatternOperation recursive => recursive.DeclaredSymbol as ILocalSymbol,
        IListPatternOperation list => list.DeclaredSymbol as ILocalSymbol,
        _ => null,
    };

    private static IEnumerable<IOperation> Self(IOperation root)
    {
        yield return root;
        foreach (IOperation descendant in root.Descendants())
        {
            yield return descendant;
        }
    }

    private static void MarkReferenced(IOperation root, HashSet<ISymbol> shared)
    {
        foreach (IOperation operation in Self(root))
        {
            switch (operation)
            {
                case ILocalReferenceOperation local:
                    shared.Add(local.Local);
                    break;
                case IParameterReferenceOperation parameter:
                    shared.Add(parameter.Parameter);
                    break;
            }
        }
    }

    private static bool IsWrite(IOperation reference)
    {
        if (reference is ILocalReferenceOperation { IsDeclaration: true })
        {
            return true;
        }

        // (a, b) = ... and foreach ((Job job, int id) in ...): the variable is inside the target tuple.
        IOperation current = reference;
        IOperation? parent = reference.Parent;
        while (parent is ITupleOperation or IDeclarationExpressionOperation)
        {
            current = parent;
            parent = parent.Parent;
        }

        return parent switch
        {
            ISimpleAssignmentOperation assignment => assignment.Target == current,
            IDeconstructionAssignmentOperation deconstruction => deconstruction.Target == current,
            IArgumentOperation argument => current == reference && argument.Parameter?.RefKind is RefKind.Out or RefKind.Ref,
            _ => false,
        };
    }

    /// <summary>How <paramref name="reference"/> consumes its job, or null when it does not.</summary>
    private static string? Consumption(IOperation reference, MyriadTypes types)
    {
        IOperation? parent = reference.Parent;
        if (parent is IAwaitOperation)
        {
            return "awaited";
        }

        if (parent is IInvocationOperation call && call.Instance == reference && s_consumingMethods.Contains(call.TargetMethod.Name))
        {
            return $"{call.TargetMethod.Name}() called";
        }

        if (parent is not IArgumentOperation)
        {
            // Elements of a params array: WhenAll(a, b).
            while (parent is IArrayInitializerOperation or IArrayCreationOperation)
            {
                parent = parent.Parent;
            }

            if (parent is not IArgumentOperation)
            {
                return null;
            }
        }

        if (parent.Parent is IInvocationOperation target)
        {
            IMethodSymbol method = target.TargetMethod;
            if (method.Name == "Detach" && types.IsRuntime(method.ContainingType))
            {
                return "handed to Detach";
            }

            if (s_consumingJobStatics.Contains(method.Name) && SymbolEqualityComparer.Default.Equals(method.ContainingType, types.Job))
            {
                return $"passed to Job.{method.Name}";
            }
        }

        return null;
    }
}
