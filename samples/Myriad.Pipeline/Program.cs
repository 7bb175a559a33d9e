// A word-count pipeline: a producer reads "files" and sends their lines over a bounded channel; a
// JobScope runs at most four workers at once, each counting the words of one line; one line is
// malformed and its worker fails, which cancels the scope; the results arrive in completion order
// through await foreach. The program checks what it printed and exits 0 when all went as described.
using System;
using System.Collections.Generic;
using System.Threading;
using Myriad;
using Myriad.Channels;
using Myriad.Scheduling;

using var runtime = new MultiThreadRuntime();
using var deadline = new CancellationTokenSource(TimeSpan.FromSeconds(30)); // the whole run's cancellation
const int Dispatcher = -1; // the dispatcher child's result: no line has a negative word count

int exitCode = runtime.Run((runtime, deadline.Token), static async s =>
{
    (JobRuntime rt, CancellationToken ct) = s;

    // Stage 1: a producer fills a bounded channel (it waits while 8 lines are unread) and closes it.
    Chan<string> lines = Chan.Bounded<string>(8);
    Job producer = lines.SendAllAsync(ReadLines(ct), ct);

    // Stage 2: a scope of workers, at most 4 running at once, canceled with the run.
    int total = 0, counted = 0;
    Exception? failure = null;
    await using (var scope = new JobScope<int>(rt, maxConcurrency: 4, ct))
    {
        // The dispatcher is a child too: it receives lines and spawns one worker per line, waiting
        // for a free slot each time. When a worker fails, the scope's token stops it.
        await scope.SpawnAsync((lines, scope), static async (d, token) =>
        {
            try
            {
                await foreach (string line in d.lines.ReadAllAsync(token))
                {
                    await d.scope.SpawnAsync(line, static (l, t) => CountWords(l, t));
                }
            }
            catch (OperationCanceledException)
            {
                // the scope was canceled: stop dispatching
            }

            return Dispatcher; // not a line's count: skipped below
        });

        // Stage 3: results in completion order. The failure surfaces after the last result.
        try
        {
            await foreach (int words in scope)
            {
                if (words == Dispatcher)
                {
                    continue; // the dispatcher's own result, not a line's
                }

                total += words;
                counted++;
            }
        }
        catch (FormatException e)
        {
            failure = e;
        }
    }

    // Nobody reads the lines any more: closing the channel ends a producer still waiting to send
    // (its send throws ChannelClosedException). TryComplete is false if it had already finished.
    lines.Writer.TryComplete();
    try
    {
        await producer;
    }
    catch (System.Threading.Channels.ChannelClosedException)
    {
        // the producer was stopped mid-way, as intended
    }

    Console.WriteLine($"counted {counted} results, {total} words; failure: {failure?.Message ?? "none"}");
    bool ok = failure is FormatException && counted > 0 && total > 0;
    Console.WriteLine(ok ? "pipeline sample: OK" : "pipeline sample: UNEXPECTED OUTCOME");
    return ok ? 0 : 1;
});

return exitCode;

static async IAsyncEnumerable<string> ReadLines([System.Runtime.CompilerServices.EnumeratorCancellation] CancellationToken ct = default)
{
    string[] file = ["the quick brown fox", "jumps over", "the lazy dog", "lorem ipsum dolor sit amet"];
    for (int i = 0; i < 200; i++)
    {
        await Job.Delay(TimeSpan.FromMilliseconds(1), ct); // stands in for async file I/O
        yield return i == 120 ? "\u0000 malformed line" : file[i % file.Length];
    }
}

static async Job<int> CountWords(string line, CancellationToken ct)
{
    await Job.Delay(TimeSpan.FromMilliseconds(2), ct); // stands in for real work that honours the token
    if (line.Contains('\u0000'))
    {
        throw new FormatException("a malformed line");
    }

    return line.Split(' ', StringSplitOptions.RemoveEmptyEntries).Length;
}
