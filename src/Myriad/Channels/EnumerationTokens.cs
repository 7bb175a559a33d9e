using System.Threading;

namespace Myriad.Channels;

/// <summary>
/// The token of an enumeration started by <c>GetAsyncEnumerator(token)</c> on a sequence that was
/// given a token of its own (<c>ReadAllAsync(token)</c>): either one alone when only one can fire,
/// or both linked, as a compiler-generated async iterator combines them.
/// </summary>
internal static class EnumerationTokens
{
    /// <summary>
    /// The combined token; <paramref name="linked"/> is the source to dispose with the enumerator,
    /// or null when no link was needed.
    /// </summary>
    internal static CancellationToken Combine(CancellationToken sequenceToken, CancellationToken enumeratorToken, out CancellationTokenSource? linked)
    {
        linked = null;
        if (!enumeratorToken.CanBeCanceled || enumeratorToken == sequenceToken)
        {
            return sequenceToken;
        }

        if (!sequenceToken.CanBeCanceled)
        {
            return enumeratorToken;
        }

        linked = CancellationTokenSource.CreateLinkedTokenSource(sequenceToken, enumeratorToken);
        return linked.Token;
    }
}
