using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;

namespace Myriad;

public readonly partial struct Job
{
    /// <summary>
    /// The other failures behind an exception that <see cref="WhenAll(IEnumerable{Job})"/> or a
    /// <see cref="JobScope"/> threw, keyed weakly by the thrown exception: nothing is written into the
    /// user's exception object, and an entry lives only as long as its exception.
    /// </summary>
    private static readonly ConditionalWeakTable<Exception, AggregateException> s_allFailures = new();

    /// <summary>
    /// Every failure behind <paramref name="exception"/>, the first one first, as
    /// <see cref="System.Threading.Tasks.Task.Exception"/> holds them: awaiting
    /// <see cref="WhenAll(IEnumerable{Job})"/> or a <see cref="JobScope"/> throws the first failure
    /// itself (with its own stack trace, as awaiting <c>Task.WhenAll</c> does), and this reaches the others.
    /// </summary>
    /// <param name="exception">An exception caught from such an await (any other exception gives a
    /// one-element aggregate of itself).</param>
    /// <returns>An <see cref="AggregateException"/> whose <see cref="AggregateException.InnerExceptions"/>
    /// are all the failures, <paramref name="exception"/> first. When the same exception object was the
    /// first failure of several combinators, the one that threw it last is reported.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="exception"/> is null.</exception>
    public static AggregateException GetAllFailures(Exception exception)
    {
        ArgumentNullException.ThrowIfNull(exception);
        return s_allFailures.TryGetValue(exception, out AggregateException? all) ? all : new AggregateException(exception);
    }

    /// <summary>The exception to throw for <paramref name="failures"/> (at least one): the first, with the others recorded.</summary>
    internal static Exception RecordFailures(IReadOnlyList<Exception> failures)
    {
        Exception first = failures[0];
        if (failures.Count > 1)
        {
            s_allFailures.AddOrUpdate(first, new AggregateException(failures));
        }

        return first;
    }
}
