using System;
using System.Collections.Generic;
using System.IO;

namespace Myriad.Compare;

/// <summary>Finds a Go toolchain and builds <c>bench/go</c> into <c>bench/go/bin/gobench</c>.</summary>
internal static class GoToolchain
{
    public const string InstallHint = "Go is not installed: run `bash bench/go/install-go.sh` (or `bash bench/compare.sh`, which does it for you) to compare with Go.";

    private const string BackportsGo = "/usr/lib/go-1.23/bin/go";

    /// <summary>The go binary: $MYRIAD_GO if set, else on PATH, else Debian's golang-1.23-go location; null if none exists.</summary>
    public static string? FindGo()
    {
        string? explicitGo = Environment.GetEnvironmentVariable("MYRIAD_GO");
        if (!string.IsNullOrEmpty(explicitGo))
        {
            return File.Exists(explicitGo) ? explicitGo : null;
        }

        string? path = Environment.GetEnvironmentVariable("PATH");
        if (path is not null)
        {
            foreach (string dir in path.Split(Path.PathSeparator, StringSplitOptions.RemoveEmptyEntries))
            {
                string candidate = Path.Combine(dir, "go");
                if (File.Exists(candidate))
                {
                    return candidate;
                }
            }
        }

        return File.Exists(BackportsGo) ? BackportsGo : null;
    }

    /// <summary>Builds gobench; returns its path, or null with <paramref name="error"/> set.</summary>
    public static string? Build(string repoRoot, string go, out string? error)
    {
        string dir = Path.Combine(repoRoot, "bench", "go");
        string output = Path.Combine(dir, "bin", "gobench");
        if (!File.Exists(Path.Combine(dir, "go.mod")))
        {
            error = $"bench/go not found under {repoRoot}";
            return null;
        }

        var env = new Dictionary<string, string> { ["GOTOOLCHAIN"] = "local", ["CGO_ENABLED"] = "0" };
        var psi = new System.Diagnostics.ProcessStartInfo(go)
        {
            WorkingDirectory = dir,
            RedirectStandardError = true,
            RedirectStandardOutput = true,
            UseShellExecute = false,
        };
        foreach (string a in new[] { "build", "-o", output, "." })
        {
            psi.ArgumentList.Add(a);
        }

        foreach (KeyValuePair<string, string> kv in env)
        {
            psi.Environment[kv.Key] = kv.Value;
        }

        try
        {
            using var p = System.Diagnostics.Process.Start(psi)!;
            string stderr = p.StandardError.ReadToEnd();
            p.StandardOutput.ReadToEnd();
            p.WaitForExit();
            if (p.ExitCode != 0 || !File.Exists(output))
            {
                error = $"`go build` in bench/go failed (exit {p.ExitCode}): {stderr.Trim()}";
                return null;
            }
        }
        catch (System.ComponentModel.Win32Exception e)
        {
            error = $"cannot run {go}: {e.Message}";
            return null;
        }

        error = null;
        return output;
    }

    public static string Version(string go)
    {
        try
        {
            var psi = new System.Diagnostics.ProcessStartInfo(go) { RedirectStandardOutput = true, UseShellExecute = false };
            psi.ArgumentList.Add("version");
            using var p = System.Diagnostics.Process.Start(psi)!;
            string v = p.StandardOutput.ReadToEnd().Trim();
            p.WaitForExit();
            return v;
        }
        catch (System.ComponentModel.Win32Exception)
        {
            return "unknown";
        }
    }

    /// <summary>The repository root: the first directory above the working directory or this assembly that holds Myriad.slnx.</summary>
    public static string? FindRepoRoot()
    {
        foreach (string start in new[] { Directory.GetCurrentDirectory(), AppContext.BaseDirectory })
        {
            for (DirectoryInfo? d = new(start); d is not null; d = d.Parent)
            {
                if (File.Exists(Path.Combine(d.FullName, "Myriad.slnx")))
                {
                    return d.FullName;
                }
            }
        }

        return null;
    }
}
