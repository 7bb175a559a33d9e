using System.Collections.Immutable;
using System.Linq;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CSharp;
using Microsoft.CodeAnalysis.CSharp.Syntax;
using Microsoft.CodeAnalysis.Diagnostics;
using Microsoft.CodeAnalysis.Operations;

namespace Myriad.Analyzers;

/// <summary>
/// MYR0004: a lambda that captures variables, passed to a Myriad method that has a typed-state form.
/// Two cases: the stateless overload (<c>rt.Spawn(() => Use(x))</c>, where
/// <c>rt.Spawn(x, static x => Use(x))</c> exists; <c>Select.Receive(ch, v => Use(v, x))</c>, where
/// <c>Select.Receive(ch, x, static (x, v) => Use(v, x))</c> exists), and the typed-state form itself
/// with a lambda that still captures (<c>rt.Spawn(a, s => Use(s, b))</c>,
/// <c>scope.SpawnAsync(a, (s, ct) => Use(s, b))</c>).
/// </summary>
[DiagnosticAnalyzer(LanguageNames.CSharp)]
public sealed class CapturingLambdaAnalyzer : MyriadAnalyzer
{
    /// <summary>Set when the lambda captures exactly one local or parameter that it does not write: the code fix then applies.</summary>
    internal const string CapturedProperty = "Captured";

    /// <inheritdoc/>
    public override ImmutableArray<DiagnosticDescriptor> SupportedDiagnostics => ImmutableArray.Create(Descriptors.CapturingLambda);

    /// <inheritdoc/>
    private protected override void Register(CompilationStartAnalysisContext start, MyriadTypes types)
    {
        start.RegisterOperationAction(Analyze, OperationKind.Invocation);
    }

    private static void Analyze(OperationAnalysisContext context)
    {
        var call = (IInvocationOperation)context.Operation;
        IMethodSymbol method = call.TargetMethod;
        if (!IsMyriadType(method.ContainingType))
        {
            return;
        }

        foreach (IArgumentOperation argument in call.Arguments)
        {
            if (argument.Parameter is not { } parameter
                || argument.Value is not IDelegateCreationOperation { Target: IAnonymousFunctionOperation lambda }
                || lambda.Syntax is not AnonymousFunctionExpressionSyntax syntax
                || syntax.Modifiers.Any(SyntaxKind.StaticKeyword))
            {
                continue;
            }

            bool statelessWithStatefulTwin = HasTypedStateTwin(method, parameter);
            bool statefulForm = IsTypedStateParameter(method.OriginalDefinition, parameter.Ordinal);
            if (!statelessWithStatefulTwin && !statefulForm)
            {
                continue;
            }

            SemanticModel? model = call.SemanticModel;
            if (model is null)
            {
                continue;
            }

            if (model.AnalyzeDataFlow(syntax) is not { Succeeded: true } flow)
            {
                continue;
            }

            ImmutableArray<ISymbol> captured = flow.CapturedInside
                .Where(s => !flow.VariablesDeclared.Contains(s, SymbolEqualityComparer.Default))
                .ToImmutableArray();
            if (captured.IsEmpty)
            {
                continue;
            }

            string names = string.Join(", ", captured.Select(s => s is IParameterSymbol { IsThis: true } ? "this" : Identifiers.Escaped(s.Name)));
            string message = statelessWithStatefulTwin
                ? $"The lambda captures {names}: pass it as the state of the typed-state overload '{method.Name}({TwinShape(parameter, lambda)})', which allocates no closure"
                : $"The lambda captures {names}: carry it in the state (a tuple for several values) and make the lambda static";

            ImmutableDictionary<string, string?> properties = ImmutableDictionary<string, string?>.Empty;
            if (statelessWithStatefulTwin
                && captured.Length == 1
                && captured[0] is ILocalSymbol or IParameterSymbol { IsThis: false }
                && !flow.WrittenInside.Contains(captured[0], SymbolEqualityComparer.Default)
                && lambda.Symbol.Parameters.IsEmpty)
            {
                properties = properties.Add(CapturedProperty, captured[0].Name);
            }

            context.ReportDiagnostic(Diagnostic.Create(Descriptors.CapturingLambda, syntax.GetLocation(), properties, message));
        }
    }

    /// <summary>The arguments of the typed-state call, for the message: <c>state, static s => ...</c>, <c>..., state, static (s, ...) => ...</c>.</summary>
    private static string TwinShape(IParameterSymbol parameter, IAnonymousFunctionOperation lambda) =>
        (parameter.Ordinal == 0 ? string.Empty : "..., ")
        + (lambda.Symbol.Parameters.IsEmpty ? "state, static s => ..." : "state, static (s, ...) => ...");

    private static bool IsMyriadType(INamedTypeSymbol? type)
    {
        for (INamespaceSymbol? ns = type?.ContainingNamespace; ns is not null && !ns.IsGlobalNamespace; ns = ns.ContainingNamespace)
        {
            if (ns.ContainingNamespace is { IsGlobalNamespace: true } && ns.Name == "Myriad")
            {
                return true;
            }
        }

        return false;
    }

    /// <summary>
    /// Whether parameter <paramref name="ordinal"/> is a typed-state delegate: see <see cref="StateOrdinal"/>.
    /// </summary>
    private static bool IsTypedStateParameter(IMethodSymbol method, int ordinal) => StateOrdinal(method, ordinal) >= 0;

    /// <summary>
    /// The ordinal of the state that delegate parameter <paramref name="ordinal"/> takes first, or -1:
    /// the delegate's first parameter has a type parameter of the method as its type, and so does an
    /// earlier parameter, the state. <c>Spawn(TState state, Func&lt;TState, Job&gt; body)</c>,
    /// <c>SpawnAsync(TState state, Func&lt;TState, CancellationToken, Job&gt; body)</c>,
    /// <c>Receive(Chan&lt;T&gt; channel, TState state, Action&lt;TState, T&gt; onReceived)</c>.
    /// </summary>
    private static int StateOrdinal(IMethodSymbol method, int ordinal)
    {
        if (method.Parameters[ordinal].Type is not INamedTypeSymbol { DelegateInvokeMethod: { Parameters.Length: > 0 } invoke }
            || invoke.Parameters[0].Type is not ITypeParameterSymbol { TypeParameterKind: TypeParameterKind.Method } state)
        {
            return -1;
        }

        for (int i = ordinal - 1; i >= 0; i--)
        {
            if (SymbolEqualityComparer.Default.Equals(method.Parameters[i].Type, state))
            {
                return i;
            }
        }

        return -1;
    }

    /// <summary>
    /// Whether <paramref name="method"/> takes a delegate as <paramref name="parameter"/> and has a
    /// typed-state twin: the same parameters with a state inserted just before the delegate (where
    /// the code fix puts it), and a delegate that takes that state before the same parameters and
    /// has the same kind of result. <c>Spawn(Func&lt;Job&gt;)</c> and
    /// <c>Spawn(TState, Func&lt;TState, Job&gt;)</c>; <c>Receive(Chan&lt;T&gt;, Action&lt;T&gt;)</c>
    /// and <c>Receive(Chan&lt;T&gt;, TState, Action&lt;TState, T&gt;)</c>.
    /// </summary>
    private static bool HasTypedStateTwin(IMethodSymbol method, IParameterSymbol parameter)
    {
        // Compared as declared: Receive<T>(Chan<T>, Action<T>), not Receive<int>(Chan<int>, Action<int>).
        method = method.OriginalDefinition;
        int ordinal = parameter.Ordinal;
        if (method.Parameters[ordinal].Type is not INamedTypeSymbol { DelegateInvokeMethod: { } invoke })
        {
            return false;
        }

        foreach (IMethodSymbol twin in method.ContainingType.GetMembers(method.Name).OfType<IMethodSymbol>())
        {
            if (twin.Parameters.Length != method.Parameters.Length + 1
                || twin.IsStatic != method.IsStatic
                || StateOrdinal(twin, ordinal + 1) != ordinal
                || twin.Parameters[ordinal + 1].Type is not INamedTypeSymbol { DelegateInvokeMethod: { } twinInvoke }
                || twinInvoke.Parameters.Length != invoke.Parameters.Length + 1
                || !SameResultKind(invoke.ReturnType, twinInvoke.ReturnType))
            {
                continue;
            }

            bool same = true;
            for (int i = 0; i < method.Parameters.Length && same; i++)
            {
                same = i == ordinal || SameShape(method.Parameters[i].Type, twin.Parameters[i < ordinal ? i : i + 1].Type);
            }

            for (int i = 0; i < invoke.Parameters.Length && same; i++)
            {
                same = SameShape(invoke.Parameters[i].Type, twinInvoke.Parameters[i + 1].Type);
            }

            if (same)
            {
                return true;
            }
        }

        return false;
    }

    /// <summary>
    /// Whether two parameter types of overloads match, type arguments aside: the twins have their
    /// own type parameters (<c>Chan&lt;T&gt;</c> of <c>Receive&lt;T&gt;</c> and of
    /// <c>Receive&lt;TState, T&gt;</c>).
    /// </summary>
    private static bool SameShape(ITypeSymbol a, ITypeSymbol b) =>
        (a is ITypeParameterSymbol && b is ITypeParameterSymbol)
        || SymbolEqualityComparer.Default.Equals(a.OriginalDefinition, b.OriginalDefinition);

    private static bool SameResultKind(ITypeSymbol a, ITypeSymbol b) =>
        a.SpecialType == SpecialType.System_Void
            ? b.SpecialType == SpecialType.System_Void
            : a is INamedTypeSymbol na && b is INamedTypeSymbol nb && SymbolEqualityComparer.Default.Equals(na.OriginalDefinition, nb.OriginalDefinition);
}
