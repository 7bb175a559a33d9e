using System;
using System.Collections.Immutable;
using System.IO;
using System.Linq;
using System.Threading.Tasks;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CodeFixes;
using Microsoft.CodeAnalysis.CSharp.Testing;
using Microsoft.CodeAnalysis.Diagnostics;
using Microsoft.CodeAnalysis.Testing;

namespace Myriad.Analyzers.Tests;

/// <summary>
/// Runs an analyzer (and a code fix) over a snippet compiled against this process's own .NET
/// framework and Myriad: no reference-assembly package is downloaded, so the tests run offline.
/// Diagnostics are written in the snippet as <c>{|MYR0001:text|}</c>.
/// </summary>
internal static class Verify
{
    /// <summary>What every snippet can use.</summary>
    public const string Usings = """
        using System;
        using System.Threading.Tasks;
        using Myriad;
        using Myriad.Scheduling;

        """;

    private static readonly ImmutableArray<MetadataReference> s_references = LoadReferences();

    /// <summary>This process's framework assemblies and Myriad.</summary>
    public static ImmutableArray<MetadataReference> References => s_references;

    /// <summary>Runs <typeparamref name="TAnalyzer"/>; <paramref name="expected"/> adds diagnostics marked <c>{|#0:text|}</c>, with their messages.</summary>
    public static Task Analyzer<TAnalyzer>(string source, params DiagnosticResult[] expected)
        where TAnalyzer : DiagnosticAnalyzer, new()
    {
        var test = new CSharpAnalyzerTest<TAnalyzer, DefaultVerifier> { TestCode = Usings + source };
        test.ExpectedDiagnostics.AddRange(expected);
        Configure(test);
        return test.RunAsync();
    }

    public static Task CodeFix<TAnalyzer, TFix>(string source, string fixedSource, string? equivalenceKey = null)
        where TAnalyzer : DiagnosticAnalyzer, new()
        where TFix : CodeFixProvider, new()
    {
        var test = new CSharpCodeFixTest<TAnalyzer, TFix, DefaultVerifier>
        {
            TestCode = Usings + source,
            FixedCode = Usings + fixedSource,
            CodeActionEquivalenceKey = equivalenceKey,
        };
        Configure(test);
        return test.RunAsync();
    }

    /// <summary>Checks that the fix with <paramref name="equivalenceKey"/> is not offered for any diagnostic of <paramref name="source"/>.</summary>
    public static Task NoCodeFix<TAnalyzer, TFix>(string source, string equivalenceKey)
        where TAnalyzer : DiagnosticAnalyzer, new()
        where TFix : CodeFixProvider, new() =>
        CodeFix<TAnalyzer, TFix>(source, source, equivalenceKey);

    private static void Configure<TVerifier>(AnalyzerTest<TVerifier> test)
        where TVerifier : IVerifier, new()
    {
        test.ReferenceAssemblies = new ReferenceAssemblies("net10.0");
        test.TestState.AdditionalReferences.AddRange(s_references);
    }

    private static ImmutableArray<MetadataReference> LoadReferences()
    {
        string framework = Path.GetDirectoryName(typeof(object).Assembly.Location)!;
        string[] trusted = ((string)AppContext.GetData("TRUSTED_PLATFORM_ASSEMBLIES")!).Split(Path.PathSeparator);
        return trusted
            .Where(path => string.Equals(Path.GetDirectoryName(path), framework, StringComparison.Ordinal))
            .Append(typeof(Job).Assembly.Location)
            .Select(path => (MetadataReference)MetadataReference.CreateFromFile(path))
            .ToImmutableArray();
    }
}
