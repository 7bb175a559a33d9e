using System.Collections.Immutable;
using System.Composition;
using System.Threading;
using System.Threading.Tasks;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CodeActions;
using Microsoft.CodeAnalysis.CodeFixes;
using Microsoft.CodeAnalysis.CSharp;
using Microsoft.CodeAnalysis.CSharp.Syntax;

namespace Myriad.Analyzers;

/// <summary>
/// Fixes MYR0004 when the lambda captures one variable and takes no parameter:
/// <c>rt.Spawn(() => Use(x))</c> becomes <c>rt.Spawn(x, static x => Use(x))</c> (the lambda's
/// parameter shadows the variable, so the body is unchanged).
/// </summary>
[ExportCodeFixProvider(LanguageNames.CSharp, Name = nameof(CapturingLambdaCodeFixProvider)), Shared]
public sealed class CapturingLambdaCodeFixProvider : CodeFixProvider
{
    internal const string StateKey = "MYR0004.State";

    /// <inheritdoc/>
    public override ImmutableArray<string> FixableDiagnosticIds => ImmutableArray.Create(Descriptors.CapturingLambda.Id);

    /// <inheritdoc/>
    public override FixAllProvider GetFixAllProvider() => WellKnownFixAllProviders.BatchFixer;

    /// <inheritdoc/>
    public override async Task RegisterCodeFixesAsync(CodeFixContext context)
    {
        Diagnostic diagnostic = context.Diagnostics[0];
        if (!diagnostic.Properties.TryGetValue(CapturingLambdaAnalyzer.CapturedProperty, out string? captured) || captured is null)
        {
            return;
        }

        SyntaxNode? root = await context.Document.GetSyntaxRootAsync(context.CancellationToken).ConfigureAwait(false);
        if (root?.FindNode(diagnostic.Location.SourceSpan, getInnermostNodeForTie: true) is not ParenthesizedLambdaExpressionSyntax { ParameterList.Parameters.Count: 0 } lambda
            || lambda.Parent is not ArgumentSyntax { NameColon: null } argument
            || argument.Parent is not ArgumentListSyntax)
        {
            return;
        }

        context.RegisterCodeFix(
            CodeAction.Create($"Pass '{Identifiers.Escaped(captured)}' as typed state to a static lambda", ct => Rewrite(context.Document, lambda, argument, captured, ct), StateKey),
            diagnostic);
    }

    private static async Task<Document> Rewrite(Document document, ParenthesizedLambdaExpressionSyntax lambda, ArgumentSyntax argument, string captured, CancellationToken cancellationToken)
    {
        SyntaxNode root = (await document.GetSyntaxRootAsync(cancellationToken).ConfigureAwait(false))!;
        var list = (ArgumentListSyntax)argument.Parent!;

        SyntaxTokenList modifiers = SyntaxFactory.TokenList(SyntaxFactory.Token(SyntaxKind.StaticKeyword).WithTrailingTrivia(SyntaxFactory.Space));
        foreach (SyntaxToken modifier in lambda.Modifiers)
        {
            modifiers = modifiers.Add(modifier);
        }

        // int @event: the parameter and the state argument keep the '@' that the body has.
        SyntaxToken name = Identifiers.Token(captured);
        SimpleLambdaExpressionSyntax replacement = SyntaxFactory.SimpleLambdaExpression(SyntaxFactory.Parameter(name))
            .WithModifiers(modifiers)
            .WithArrowToken(lambda.ArrowToken)
            .WithBlock(lambda.Block)
            .WithExpressionBody(lambda.ExpressionBody)
            .WithLeadingTrivia(lambda.GetLeadingTrivia())
            .WithTrailingTrivia(lambda.GetTrailingTrivia());

        ArgumentSyntax state = SyntaxFactory.Argument(SyntaxFactory.IdentifierName(name));
        int index = list.Arguments.IndexOf(argument);
        SeparatedSyntaxList<ArgumentSyntax> arguments = list.Arguments
            .Replace(argument, argument.WithExpression(replacement))
            .Insert(index, state);
        return document.WithSyntaxRoot(root.ReplaceNode(list, list.WithArguments(arguments)));
    }
}
