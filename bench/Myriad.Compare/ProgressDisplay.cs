using System;
using Spectre.Console;

namespace Myriad.Compare;

/// <summary>
/// Progress of the run on stderr: a live Spectre.Console progress bar on a terminal, one plain line
/// per child otherwise (redirected stderr, <c>CI</c> set, or <c>TERM=dumb</c>), so logs stay readable.
/// Messages (failures, the Go and NativeAOT build steps) print above the live bar.
/// </summary>
internal abstract class ProgressDisplay : IDisposable
{
    public static ProgressDisplay Create()
    {
        bool interactive = !Console.IsErrorRedirected
            && string.IsNullOrEmpty(Environment.GetEnvironmentVariable("CI"))
            && Environment.GetEnvironmentVariable("TERM") is { Length: > 0 } term && term != "dumb";
        return interactive ? new Live() : new Plain();
    }

    /// <summary>Runs <paramref name="body"/> with the display showing <paramref name="total"/> child processes to go.</summary>
    public abstract void Run(int total, Action body);

    /// <summary>A child process starts; <paramref name="line"/> says which ("[12/57] chain-tasks myriad n=1M run 3/5").</summary>
    public abstract void Step(string line);

    /// <summary>Children that will not run after all (a failure skips the rest of its row).</summary>
    public abstract void Skip(int count);

    /// <summary>More children than planned (recursion bisection).</summary>
    public abstract void AddTotal(int count);

    public abstract void Message(string line);

    public virtual void Dispose()
    {
    }

    private sealed class Plain : ProgressDisplay
    {
        public override void Run(int total, Action body) => body();

        public override void Step(string line) => Console.Error.WriteLine(line);

        public override void Skip(int count)
        {
        }

        public override void AddTotal(int count)
        {
        }

        public override void Message(string line) => Console.Error.WriteLine(line);
    }

    private sealed class Live : ProgressDisplay
    {
        private readonly IAnsiConsole _console = AnsiConsole.Create(new AnsiConsoleSettings
        {
            Out = new AnsiConsoleOutput(Console.Error),

            // Create() has already decided that stderr is a terminal; Spectre would otherwise also look at stdin and stdout.
            Interactive = InteractionSupport.Yes,
        });
        private ProgressTask? _task;

        public override void Run(int total, Action body)
        {
            _console.Progress()
                .AutoClear(true)
                .Columns(
                    new SpinnerColumn(),
                    new TaskDescriptionColumn { Alignment = Justify.Left },
                    new ProgressBarColumn(),
                    new PercentageColumn(),
                    new ElapsedTimeColumn(),
                    new RemainingTimeColumn())
                .Start(ctx =>
                {
                    _task = ctx.AddTask("starting", maxValue: Math.Max(1, total));
                    try
                    {
                        body();
                    }
                    finally
                    {
                        _task.Value = _task.MaxValue;
                        _task = null;
                    }
                });
        }

        public override void Step(string line)
        {
            if (_task is null)
            {
                return;
            }

            _task.Description = Markup.Escape(line);
            _task.Increment(1);
        }

        public override void Skip(int count) => _task?.Increment(count);

        public override void AddTotal(int count)
        {
            if (_task is not null)
            {
                _task.MaxValue += count;
            }
        }

        public override void Message(string line) => _console.WriteLine(line);
    }
}
