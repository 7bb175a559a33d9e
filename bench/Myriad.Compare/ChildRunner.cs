using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using System.Threading.Tasks;

namespace Myriad.Compare;

internal enum ChildStatus
{
    Ok,
    WrongResult,
    StackOverflow,
    Crashed,
    Timeout,
    BadOutput,
}

internal sealed class ChildOutcome
{
    public ChildStatus Status { get; init; }

    public RunResult? Result { get; init; }

    public int ExitCode { get; init; }

    public string StderrTail { get; init; } = "";

    public string Describe() => Status switch
    {
        ChildStatus.Ok => "ok",
        ChildStatus.WrongResult => Result is null ? "wrong result" : $"wrong result: computed {Result.Result}, expected {Result.Expected}",
        ChildStatus.StackOverflow => "stack overflow",
        ChildStatus.Timeout => "timed out",
        ChildStatus.BadOutput => $"exit code {ExitCode} and no result line",
        _ => $"crashed (exit code {ExitCode})",
    };
}

/// <summary>Launches one measured child process (this tool with <c>--child</c>, or gobench) and reads its JSON line.</summary>
internal static class ChildRunner
{
    /// <summary>The command that re-launches this tool: its apphost, or <c>dotnet Myriad.Compare.dll</c>.</summary>
    public static (string File, List<string> Prefix) SelfCommand()
    {
        string dll = typeof(ChildRunner).Assembly.Location;
        string? path = Environment.ProcessPath;
        if (path is null || Path.GetFileNameWithoutExtension(path).Equals("dotnet", StringComparison.OrdinalIgnoreCase))
        {
            return (path ?? "dotnet", [dll]);
        }

        return (path, []);
    }

    public static ChildOutcome Run(string file, IReadOnlyList<string> args, TimeSpan timeout, IReadOnlyDictionary<string, string>? environment = null)
    {
        var psi = new ProcessStartInfo(file)
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            RedirectStandardInput = false,
            UseShellExecute = false,
        };
        foreach (string a in args)
        {
            psi.ArgumentList.Add(a);
        }

        if (environment is not null)
        {
            foreach (KeyValuePair<string, string> kv in environment)
            {
                psi.Environment[kv.Key] = kv.Value;
            }
        }

        using var process = new Process { StartInfo = psi };
        process.Start();
        Task<string> stdout = process.StandardOutput.ReadToEndAsync();
        Task<string> stderr = process.StandardError.ReadToEndAsync();
        bool exited = process.WaitForExit((int)Math.Min(int.MaxValue, timeout.TotalMilliseconds));
        if (!exited)
        {
            try
            {
                process.Kill(entireProcessTree: true);
            }
            catch (InvalidOperationException)
            {
            }

            process.WaitForExit();
        }

        process.WaitForExit(); // drains the redirected streams
        string output = stdout.GetAwaiter().GetResult();
        string errors = stderr.GetAwaiter().GetResult();
        string tail = Tail(errors, 2000);
        if (!exited)
        {
            return new ChildOutcome { Status = ChildStatus.Timeout, ExitCode = -1, StderrTail = tail };
        }

        RunResult? result = null;
        foreach (string line in output.Split('\n'))
        {
            result = RunResult.TryParse(line) ?? result;
        }

        int code = process.ExitCode;
        if (result is null)
        {
            bool overflow = errors.Contains("Stack overflow", StringComparison.OrdinalIgnoreCase) || errors.Contains("StackOverflow", StringComparison.Ordinal);
            return new ChildOutcome
            {
                Status = overflow ? ChildStatus.StackOverflow : code == 0 ? ChildStatus.BadOutput : ChildStatus.Crashed,
                ExitCode = code,
                StderrTail = tail,
            };
        }

        ChildStatus status = !result.ResultOk ? ChildStatus.WrongResult : code == 0 ? ChildStatus.Ok : ChildStatus.Crashed;
        return new ChildOutcome { Status = status, Result = result, ExitCode = code, StderrTail = tail };
    }

    private static string Tail(string text, int max)
    {
        text = text.TrimEnd();
        return text.Length <= max ? text : "..." + text[^max..];
    }
}
