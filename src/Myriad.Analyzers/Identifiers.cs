using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CSharp;

namespace Myriad.Analyzers;

/// <summary>Names of symbols as they are written in C# source.</summary>
internal static class Identifiers
{
    /// <summary>
    /// <paramref name="name"/> as an identifier: <c>@event</c> for a keyword. <c>await</c> is
    /// escaped too: it is a keyword inside an async function, where a fix may put the name.
    /// </summary>
    public static string Escaped(string name) =>
        SyntaxFacts.GetKeywordKind(name) != SyntaxKind.None || name == "await" ? "@" + name : name;

    /// <summary>An identifier token for <paramref name="name"/>, escaped as <see cref="Escaped"/> says.</summary>
    public static SyntaxToken Token(string name) => SyntaxFactory.Identifier(
        SyntaxFactory.TriviaList(SyntaxFactory.ElasticMarker),
        SyntaxKind.IdentifierToken,
        Escaped(name),
        name,
        SyntaxFactory.TriviaList(SyntaxFactory.ElasticMarker));
}
