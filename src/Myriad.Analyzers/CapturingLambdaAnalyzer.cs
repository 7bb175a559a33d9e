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
/// <c>rt.Spawn(x, static x => Use(x))</c> exists), and the typed-state form itself with a lambda
/// that still captures (<c>rt.Spawn(a, s => Use(s, b))</c>).
/// </summary>
[DiagnosticAnalyzer(LanguageNames.CSharp)]
public sealed class CapturingLambdaAnalyzer : DiagnosticAnalyzer
{
    /// <summary>Set when the lambda captures exactly one local or parameter that it does not write: the code fix then applies.</summary>
    internal const string CapturedProperty = "Captured";

    /// <inheritdoc/>
    public override ImmutableArray<DiagnosticDescriptor> SupportedDiagnostics => ImmutableArray.Create(Descriptors.CapturingLambda);

    /// <inheritdoc/>
    public override void Initialize(AnalysisContext context)
    {
        context.ConfigureGeneratedCodeAnalysis(GeneratedCodeAnalysisFlags.None);
        context.EnableConcurrentExecution();
        context.RegisterCompilationStartAction(start =>
        {
            if (MyriadTypes.TryCreate(start.Compilation) is null)
            {
                return;
            }

            start.RegisterOperationAction(Analyze, OperationKind.Invocation);
        });
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
                ? $"The lambda captures {names}: pass it as the state of the typed-state overload '{method.Name}(state, static s => ...)', which allocates no closure"
                : $"The lambda captures {names}: carry it in the state (a tuple for several values) and make the lambda static";

            ImmutableDictionary<string, string?> properties = ImmutableDictionary<string, string?>.Empty;
            if (statelessWithStatefulTwin
                && captured.Length == 1
                && captured[0] is ILocalSymbol or IParameterSymbol { IsThis: false }
                && !flow.WrittenInside.Contains(captured[0], SymbolEqualityComparer.Default)
                && !syntax.ChildNodes().OfType<ParameterListSyntax>().Any(p => p.Parameters.Count > 0))
            {
                properties = properties.Add(CapturedProperty, captured[0].Name);
            }

            context.ReportDiagnostic(Diagnostic.Create(Descriptors.CapturingLambda, syntax.GetLocation(), properties, message));
        }
    }

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

    /// <summary>Whether parameter <paramref name="ordinal"/> is a delegate taking the method's state parameter, the one just before it.</summary>
    private static bool IsTypedStateParameter(IMethodSymbol method, int ordinal) =>
        ordinal > 0
        && method.Parameters[ordinal - 1].Type is ITypeParameterSymbol { TypeParameterKind: TypeParameterKind.Method } state
        && method.Parameters[ordinal].Type is INamedTypeSymbol { DelegateInvokeMethod: { Parameters.Length: 1 } invoke }
        && SymbolEqualityComparer.Default.Equals(invoke.Parameters[0].Type, state);

    /// <summary>
    /// Whether <paramref name="method"/> takes a parameterless delegate as <paramref name="parameter"/>
    /// and has an overload that takes a state just before a delegate of that state with the same
    /// kind of result.
    /// </summary>
    private static bool HasTypedStateTwin(IMethodSymbol method, IParameterSymbol parameter)
    {
        if (parameter.Type is not INamedTypeSymbol { DelegateInvokeMethod: { Parameters.Length: 0 } invoke })
        {
            return false;
        }

        foreach (IMethodSymbol twin in method.ContainingType.GetMembers(method.Name).OfType<IMethodSymbol>())
        {
            if (twin.Parameters.Length == method.Parameters.Length + 1
                && twin.IsStatic == method.IsStatic
                && IsTypedStateParameter(twin, parameter.Ordinal + 1)
                && twin.Parameters[parameter.Ordinal + 1].Type is INamedTypeSymbol { DelegateInvokeMethod: { } twinInvoke }
                && SameResultKind(invoke.ReturnType, twinInvoke.ReturnType))
            {
                return true;
            }
        }

        return false;
    }

    private static bool SameResultKind(ITypeSymbol a, ITypeSymbol b) =>
        a.SpecialType == SpecialType.System_Void
            ? b.SpecialType == SpecialType.System_Void
            : a is INamedTypeSymbol na && b is INamedTypeSymbol nb && SymbolEqualityComparer.Default.Equals(na.OriginalDefinition, nb.OriginalDefinition);
}
