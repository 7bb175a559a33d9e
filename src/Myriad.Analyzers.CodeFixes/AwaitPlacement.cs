using System.Threading;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CSharp.Syntax;

namespace Myriad.Analyzers;

/// <summary>Where the code fixes may put an <c>await</c> that the enclosing function already allows.</summary>
internal static class AwaitPlacement
{
    /// <summary>
    /// Whether an <c>await</c> at <paramref name="node"/> would still not compile although its
    /// function is async: inside the body of a <c>lock</c> (CS1996) or in an exception filter
    /// (CS7094) of the same function.
    /// </summary>
    public static bool IsForbidden(SyntaxNode node)
    {
        SyntaxNode child = node;
        foreach (SyntaxNode ancestor in node.Ancestors())
        {
            switch (ancestor)
            {
                case LockStatementSyntax @lock when @lock.Statement == child: // lock (await x) is fine
                case CatchFilterClauseSyntax:
                    return true;
                case AnonymousFunctionExpressionSyntax or LocalFunctionStatementSyntax or MemberDeclarationSyntax:
                    return false; // a nested function has its own rules, and the fixes check that it is async
            }

            child = ancestor;
        }

        return false;
    }

    /// <summary>
    /// Whether a local of a ref struct type (a <c>Span&lt;T&gt;</c>, say) is declared in a block
    /// around <paramref name="node"/>, before it, in the same function: an <c>await</c> there leaves it
    /// live across the await if it is used afterwards (CS4007), so a fix that adds one is not offered.
    /// </summary>
    public static bool HasRefStructLocalInScope(SemanticModel model, SyntaxNode node, CancellationToken cancellationToken)
    {
        foreach (SyntaxNode ancestor in node.Ancestors())
        {
            if (ancestor is AnonymousFunctionExpressionSyntax or LocalFunctionStatementSyntax or MemberDeclarationSyntax)
            {
                return false;
            }

            if (ancestor is not BlockSyntax block)
            {
                continue;
            }

            foreach (StatementSyntax statement in block.Statements)
            {
                if (statement.SpanStart >= node.SpanStart)
                {
                    break;
                }

                if (statement is LocalDeclarationStatementSyntax declaration)
                {
                    foreach (VariableDeclaratorSyntax variable in declaration.Declaration.Variables)
                    {
                        if (model.GetDeclaredSymbol(variable, cancellationToken) is ILocalSymbol { Type.IsRefLikeType: true })
                        {
                            return true;
                        }
                    }
                }
            }
        }

        return false;
    }
}
