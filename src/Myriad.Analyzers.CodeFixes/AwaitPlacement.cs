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
}
