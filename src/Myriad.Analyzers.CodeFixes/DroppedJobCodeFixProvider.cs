using System.Collections.Immutable;
using System.Composition;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CodeActions;
using Microsoft.CodeAnalysis.CodeFixes;
using Microsoft.CodeAnalysis.CSharp;
using Microsoft.CodeAnalysis.CSharp.Syntax;
using Microsoft.CodeAnalysis.Formatting;

namespace Myriad.Analyzers;

/// <summary>
/// Fixes MYR0001 on a discarded job: <c>await</c> it where the enclosing function is async, or hand
/// it to the <c>Detach</c> of a runtime variable in scope.
/// </summary>
[ExportCodeFixProvider(LanguageNames.CSharp, Name = nameof(DroppedJobCodeFixProvider)), Shared]
public sealed class DroppedJobCodeFixProvider : CodeFixProvider
{
    internal const string AwaitKey = "MYR0001.Await";

    internal const string DetachKey = "MYR0001.Detach";

    /// <inheritdoc/>
    public override ImmutableArray<string> FixableDiagnosticIds => ImmutableArray.Create(Descriptors.DroppedJob.Id);

    /// <inheritdoc/>
    public override FixAllProvider GetFixAllProvider() => WellKnownFixAllProviders.BatchFixer;

    /// <inheritdoc/>
    public override async Task RegisterCodeFixesAsync(CodeFixContext context)
    {
        Diagnostic diagnostic = context.Diagnostics[0];
        if (!diagnostic.Properties.TryGetValue(DroppedJobAnalyzer.KindProperty, out string? kind) || kind != DroppedJobAnalyzer.DiscardedKind)
        {
            return;
        }

        SyntaxNode? root = await context.Document.GetSyntaxRootAsync(context.CancellationToken).ConfigureAwait(false);
        if (root?.FindNode(diagnostic.Location.SourceSpan, getInnermostNodeForTie: true) is not ExpressionSyntax job
            || job is ConditionalAccessExpressionSyntax // a Job? cannot be awaited or detached as it is
            || DroppingStatement(job) is not { } statement)
        {
            return;
        }

        SemanticModel? model = await context.Document.GetSemanticModelAsync(context.CancellationToken).ConfigureAwait(false);
        if (IsInAsyncFunction(statement) && !AwaitPlacement.IsForbidden(statement)
            && (model is null || !AwaitPlacement.HasRefStructLocalInScope(model, statement, context.CancellationToken)))
        {
            context.RegisterCodeFix(
                CodeAction.Create("Await the job", ct => Replace(context.Document, statement, SyntaxFactory.AwaitExpression(job.WithoutTrivia()), ct), AwaitKey),
                diagnostic);
        }

        if (model is not null && FindRuntime(model, statement, context.CancellationToken) is { } runtime)
        {
            InvocationExpressionSyntax detach = SyntaxFactory.InvocationExpression(
                SyntaxFactory.MemberAccessExpression(SyntaxKind.SimpleMemberAccessExpression, SyntaxFactory.IdentifierName(Identifiers.Token(runtime)), SyntaxFactory.IdentifierName("Detach")),
                SyntaxFactory.ArgumentList(SyntaxFactory.SingletonSeparatedList(SyntaxFactory.Argument(job.WithoutTrivia()))));
            context.RegisterCodeFix(
                CodeAction.Create($"Hand the job to {Identifiers.Escaped(runtime)}.Detach", ct => Replace(context.Document, statement, detach, ct), DetachKey),
                diagnostic);
        }
    }

    /// <summary>
    /// The statement that drops <paramref name="job"/>: <c>job;</c> or <c>_ = job;</c>. Null when
    /// the job is dropped elsewhere, such as the body of an expression lambda
    /// (<c>ids.ForEach(id => Work(id))</c>): replacing the statement around it would rewrite the
    /// lambda's caller.
    /// </summary>
    private static ExpressionStatementSyntax? DroppingStatement(ExpressionSyntax job)
    {
        SyntaxNode node = job;
        while (node.Parent is ParenthesizedExpressionSyntax parenthesized)
        {
            node = parenthesized;
        }

        if (node.Parent is AssignmentExpressionSyntax { Left: IdentifierNameSyntax { Identifier.ValueText: "_" } } discard
            && discard.IsKind(SyntaxKind.SimpleAssignmentExpression)
            && discard.Right == node)
        {
            node = discard;
        }

        return node.Parent as ExpressionStatementSyntax;
    }

    private static async Task<Document> Replace(Document document, ExpressionStatementSyntax statement, ExpressionSyntax replacement, CancellationToken cancellationToken)
    {
        SyntaxNode root = (await document.GetSyntaxRootAsync(cancellationToken).ConfigureAwait(false))!;
        ExpressionStatementSyntax updated = statement.WithExpression(replacement.WithTriviaFrom(statement.Expression)).WithAdditionalAnnotations(Formatter.Annotation);
        return document.WithSyntaxRoot(root.ReplaceNode(statement, updated));
    }

    private static bool IsInAsyncFunction(SyntaxNode node)
    {
        foreach (SyntaxNode ancestor in node.Ancestors())
        {
            switch (ancestor)
            {
                case AnonymousFunctionExpressionSyntax lambda:
                    return lambda.AsyncKeyword.IsKind(SyntaxKind.AsyncKeyword);
                case LocalFunctionStatementSyntax local:
                    return local.Modifiers.Any(SyntaxKind.AsyncKeyword);
                case MethodDeclarationSyntax method:
                    return method.Modifiers.Any(SyntaxKind.AsyncKeyword);
                case GlobalStatementSyntax:
                    return true; // top-level statements may await
                case MemberDeclarationSyntax:
                    return false;
            }
        }

        return false;
    }

    /// <summary>
    /// A local or parameter of a runtime type usable at <paramref name="node"/>, nearest first,
    /// one not declared nullable first.
    /// </summary>
    private static string? FindRuntime(SemanticModel model, SyntaxNode node, CancellationToken cancellationToken)
    {
        INamedTypeSymbol? runtimeType = model.Compilation.GetTypeByMetadataName("Myriad.Scheduling.JobRuntime");
        if (runtimeType is null)
        {
            return null;
        }

        // Inside a static lambda or static local function only its own variables are usable.
        SyntaxNode? staticScope = node.Ancestors().FirstOrDefault(a =>
            (a is AnonymousFunctionExpressionSyntax lambda && lambda.Modifiers.Any(SyntaxKind.StaticKeyword))
            || (a is LocalFunctionStatementSyntax local && local.Modifiers.Any(SyntaxKind.StaticKeyword)));

        ISymbol? nullable = null;
        foreach (ISymbol symbol in model.LookupSymbols(node.SpanStart))
        {
            cancellationToken.ThrowIfCancellationRequested();
            ITypeSymbol? type = symbol switch
            {
                ILocalSymbol local => local.Type,
                IParameterSymbol parameter => parameter.Type,
                _ => null,
            };
            if (type is null || !DerivesFrom(type, runtimeType))
            {
                continue;
            }

            Location declared = symbol.Locations.FirstOrDefault() ?? Location.None;
            if (staticScope is not null && !staticScope.Span.Contains(declared.SourceSpan))
            {
                continue;
            }

            if (symbol is ILocalSymbol && declared.SourceSpan.Start > node.SpanStart)
            {
                continue; // declared later in the block
            }

            if (symbol is ILocalSymbol && declared.IsInSource
                && declared.SourceTree?.GetRoot(cancellationToken).FindNode(declared.SourceSpan) is VariableDeclaratorSyntax { Initializer: null })
            {
                continue; // declared without a value: it may be unassigned here (CS0165)
            }

            // A runtime declared nullable (MultiThreadRuntime? maybe) may be null here, and its
            // Detach would then throw or warn (CS8602): only the last resort.
            if (type.NullableAnnotation == NullableAnnotation.Annotated)
            {
                nullable ??= symbol;
                continue;
            }

            return symbol.Name;
        }

        return nullable?.Name;
    }

    private static bool DerivesFrom(ITypeSymbol type, INamedTypeSymbol baseType)
    {
        for (ITypeSymbol? t = type; t is not null; t = t.BaseType)
        {
            if (SymbolEqualityComparer.Default.Equals(t, baseType))
            {
                return true;
            }
        }

        return false;
    }
}
