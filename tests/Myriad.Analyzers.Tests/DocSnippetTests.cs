using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Text.RegularExpressions;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CSharp;
using Xunit;

namespace Myriad.Analyzers.Tests;

/// <summary>
/// Every complete C# snippet of the README compiles as shown (a program of top-level statements,
/// with implicit usings as a new console project has), against this build of Myriad. A snippet
/// that is meant as a fragment says so with <c>csharp fragment</c> on its fence and is skipped.
/// </summary>
public class DocSnippetTests
{
    private static readonly string[] ImplicitUsings =
    [
        "global using System;",
        "global using System.Collections.Generic;",
        "global using System.IO;",
        "global using System.Linq;",
        "global using System.Threading;",
        "global using System.Threading.Tasks;",
    ];

    public static TheoryData<string, int> ReadmeSnippets()
    {
        var data = new TheoryData<string, int>();
        foreach ((string file, int index, _) in Snippets("README.md"))
        {
            data.Add(file, index);
        }

        return data;
    }

    [Theory]
    [MemberData(nameof(ReadmeSnippets))]
    public void ReadmeSnippet_AsShown_Compiles(string file, int index)
    {
        string code = Snippets(file).Single(s => s.Index == index).Code;
        var compilation = CSharpCompilation.Create(
            $"Snippet{index}",
            [
                CSharpSyntaxTree.ParseText(string.Join('\n', ImplicitUsings)),
                CSharpSyntaxTree.ParseText(code),
            ],
            Verify.References,
            new CSharpCompilationOptions(OutputKind.ConsoleApplication, nullableContextOptions: NullableContextOptions.Enable));
        string[] errors = compilation.GetDiagnostics()
            .Where(d => d.Severity == DiagnosticSeverity.Error)
            .Select(d => d.ToString())
            .ToArray();
        Assert.True(errors.Length == 0, $"{file} snippet {index} does not compile:\n{string.Join('\n', errors)}\n---\n{code}");
    }

    private static IEnumerable<(string File, int Index, string Code)> Snippets(string file)
    {
        string text = File.ReadAllText(Path.Combine(RepositoryRoot(), file));
        int index = 0;
        foreach (Match match in Regex.Matches(text, "^```csharp[ \\t]*(?<tag>[^\\n]*)\\n(?<code>.*?)^```", RegexOptions.Multiline | RegexOptions.Singleline))
        {
            index++;
            if (!match.Groups["tag"].Value.Contains("fragment", StringComparison.Ordinal))
            {
                yield return (file, index, match.Groups["code"].Value);
            }
        }
    }

    private static string RepositoryRoot()
    {
        for (var dir = new DirectoryInfo(AppContext.BaseDirectory); dir is not null; dir = dir.Parent)
        {
            if (File.Exists(Path.Combine(dir.FullName, "Myriad.slnx")))
            {
                return dir.FullName;
            }
        }

        throw new InvalidOperationException("The repository root (Myriad.slnx) was not found above " + AppContext.BaseDirectory);
    }
}
