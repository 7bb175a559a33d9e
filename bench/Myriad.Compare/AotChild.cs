using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using System.Linq;
using System.Runtime.InteropServices;

namespace Myriad.Compare;

/// <summary>
/// Publishes <c>bench/Myriad.Compare.Aot</c> (the child side of this tool: the experiments and
/// <see cref="ChildHost"/>) with NativeAOT, for the <c>myriad-aot</c> variants.
/// </summary>
internal static class AotChild
{
    private const string Project = "Myriad.Compare.Aot";

    /// <summary>Limit for one publish: a cold NativeAOT publish takes about a minute on 2 cores.</summary>
    private static readonly TimeSpan PublishTimeout = TimeSpan.FromMinutes(10);

    /// <summary>
    /// Runs <c>dotnet publish -c Release -r RID</c> (the project sets <c>PublishAot</c>; passing it on
    /// the command line would also turn on the trim analyzers of the library's own build, whose
    /// warnings are errors there); returns the native child's path, or null and why not.</summary>
    public static string? Publish(out string? problem)
    {
        string? root = GoToolchain.FindRepoRoot();
        if (root is null)
        {
            problem = "repository root (Myriad.slnx) not found; run from the repository";
            return null;
        }

        string dir = Path.Combine(root, "bench", Project);
        string project = Path.Combine(dir, Project + ".csproj");
        string output = Path.Combine(dir, "bin", "aot");
        if (!File.Exists(project))
        {
            problem = $"{project} not found";
            return null;
        }

        string dotnet = Environment.GetEnvironmentVariable("DOTNET_HOST_PATH") is { Length: > 0 } host && File.Exists(host) ? host : "dotnet";
        var psi = new ProcessStartInfo(dotnet)
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        foreach (string a in new[]
        {
            "publish", project, "-c", "Release", "-r", RuntimeInformation.RuntimeIdentifier, "-o", output,
            "-nologo", "-v:q",

            // No build servers: they would outlive the publish and keep its output pipes open.
            "-nodeReuse:false", "-p:UseSharedCompilation=false",
        })
        {
            psi.ArgumentList.Add(a);
        }

        psi.Environment["MSBUILDDISABLENODEREUSE"] = "1";
        psi.Environment["DOTNET_CLI_USE_MSBUILD_SERVER"] = "0";
        psi.Environment["DOTNET_CLI_TELEMETRY_OPTOUT"] = "1";
        try
        {
            using var p = Process.Start(psi)!;
            var stdout = p.StandardOutput.ReadToEndAsync();
            var stderr = p.StandardError.ReadToEndAsync();
            if (!p.WaitForExit(PublishTimeout))
            {
                p.Kill(entireProcessTree: true);
                problem = $"dotnet publish (NativeAOT) did not finish within {PublishTimeout.TotalMinutes:0} minutes";
                return null;
            }

            p.WaitForExit();
            string log = stdout.Result + "\n" + stderr.Result;
            string binary = Path.Combine(output, Project);
            if (p.ExitCode != 0 || !File.Exists(binary))
            {
                problem = $"dotnet publish (NativeAOT) failed (exit {p.ExitCode}): {FirstErrors(log)}";
                return null;
            }

            problem = null;
            return binary;
        }
        catch (System.ComponentModel.Win32Exception e)
        {
            problem = $"cannot run {dotnet}: {e.Message}";
            return null;
        }
    }

    /// <summary>The reason goes into every unavailable row of the report: keep it to a few lines.</summary>
    private const int MaxProblemLength = 400;

    private static string FirstErrors(string log)
    {
        List<string> errors = log.Split('\n').Select(l => l.Trim()).Where(l => l.Contains("error", StringComparison.OrdinalIgnoreCase)).Distinct().Take(3).ToList();
        if (errors.Count == 0)
        {
            errors = log.Split('\n').Select(l => l.Trim()).Where(l => l.Length > 0).TakeLast(3).ToList();
        }

        string text = string.Join(" | ", errors);
        return text.Length <= MaxProblemLength ? text : text[..MaxProblemLength] + "...";
    }
}
