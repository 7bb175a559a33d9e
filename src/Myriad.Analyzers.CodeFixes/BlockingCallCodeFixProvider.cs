using System.Collections.Immutable;
using System.Composition;
using System.Threading;
using System.Threading.Tasks;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CodeActions;
using Microsoft.CodeAnalysis.CodeFixes;
using Microsoft.CodeAnalysis.CSharp;
using Microsoft.CodeAnalysis.CSharp.Syntax;
using Microsoft.CodeAnalysis.Simplification;

namespace Myriad.Analyzers;

/// <summary>Fixes MYR0003: <c>x.Wait()</c>, <c>x.Result</c> and <c>x.GetAwaiter().GetResult()</c> become <c>await x</c>.</summary>
[ExportCodeFixProvider(LanguageNames.CSharp, Name = nameof(BlockingCallCodeFixProvider)), Shared]
public sealed class BlockingCallCodeFixProvider : CodeFixProvider
{
    internal const string AwaitKey = "MYR0003.Await";

    /// <inheritdoc/>
    public override ImmutableArray<string> FixableDiagnosticIds => ImmutableArray.Create(Descriptors.BlockingInAsyncJob.Id);

    /// <inheritdoc/>
    public override FixAllProvider GetFixAllProvider() => WellKnownFixAllProviders.BatchFixer;

    /// <inheritdoc/>
    public override async Task RegisterCodeFixesAsync(CodeFixContext context)
    {
        Diagnostic diagnostic = context.Diagnostics[0];
        SyntaxNode? root = await context.Document.GetSyntaxRootAsync(context.CancellationToken).ConfigureAwait(false);
        if (root?.FindNode(diagnostic.Location.SourceSpan, getInnermostNodeForTie: true) is not ExpressionSyntax blocking
            || Awaited(blocking) is not { } awaited
            || AwaitPlacement.IsForbidden(blocking))
        {
            return;
        }

        SemanticModel? model = await context.Document.GetSemanticModelAsync(context.CancellationToken).ConfigureAwait(false);
        if (model is null || AwaitPlacement.HasRefStructLocalInScope(model, blocking, context.CancellationToken))
        {
            return;
        }

        context.RegisterCodeFix(
            CodeAction.Create("Await instead of blocking", ct => Replace(context.Document, blocking, awaited, ct), AwaitKey),
            diagnostic);
    }

    /// <summary>What to await instead of <paramref name="blocking"/>, or null when the form is not mechanical.</summary>
    private static ExpressionSyntax? Awaited(ExpressionSyntax blocking) => blocking switch
    {
        // x.Wait() (with no timeout or token: those change the meaning)
        InvocationExpressionSyntax { ArgumentList.Arguments.Count: 0, Expression: MemberAccessExpressionSyntax { Name.Identifier.ValueText: "Wait" } wait } => wait.Expression,

        // x.GetAwaiter().GetResult()
        InvocationExpressionSyntax
        {
            ArgumentList.Arguments.Count: 0,
            Expression: MemberAccessExpressionSyntax
            {
                Name.Identifier.ValueText: "GetResult",
                Expression: InvocationExpressionSyntax { ArgumentList.Arguments.Count: 0, Expression: MemberAccessExpressionSyntax { Name.Identifier.ValueText: "GetAwaiter" } getAwaiter },
            },
        } => getAwaiter.Expression,

        // x.Result
        MemberAccessExpressionSyntax { Name.Identifier.ValueText: "Result" } result => result.Expression,
        _ => null,
    };

    private static async Task<Document> Replace(Document document, ExpressionSyntax blocking, ExpressionSyntax awaited, CancellationToken cancellationToken)
    {
        SyntaxNode root = (await document.GetSyntaxRootAsync(cancellationToken).ConfigureAwait(false))!;
        ExpressionSyntax replacement = SyntaxFactory.ParenthesizedExpression(SyntaxFactory.AwaitExpression(awaited.WithoutTrivia()))
            .WithTriviaFrom(blocking)
            .WithAdditionalAnnotations(Simplifier.Annotation);
        return document.WithSyntaxRoot(root.ReplaceNode(blocking, replacement));
    }
}
