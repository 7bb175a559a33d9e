using System;

namespace Myriad.Scheduling;

public sealed partial class CurrentThreadRuntime
{
    private readonly TimeProvider _timeProvider = TimeProvider.System;

    /// <summary>
    /// Creates a runtime named by <see cref="RuntimeOptions.Name"/> whose timers use
    /// <see cref="RuntimeOptions.TimeProvider"/> and whose driving thread spins for
    /// <see cref="RuntimeOptions.IdleSpin"/> before it sleeps (the other options concern the
    /// multi-threaded runtime).
    /// </summary>
    /// <exception cref="ArgumentNullException"><paramref name="options"/> is null.</exception>
    public CurrentThreadRuntime(RuntimeOptions options)
        : this((options ?? throw new ArgumentNullException(nameof(options))).Name, options.IdleSpin)
    {
        _timeProvider = options.TimeProvider;
    }

    /// <inheritdoc/>
    public override TimeProvider TimeProvider => _timeProvider;
}
