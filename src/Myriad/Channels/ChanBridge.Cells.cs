using System;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Channels;
using System.Threading.Tasks;
using Myriad.Internal;
using Myriad.Jobs;
using Myriad.Scheduling;

namespace Myriad.Channels;

internal sealed partial class ChanBridge<T>
{
    /// <summary>
    /// The cell behind a <c>ValueTask</c> that a view returns when it must wait. It is the continuation
    /// of the channel operation it waits for (a receive or a send), and the <c>ValueTask</c>'s source
    /// itself, so that it learns which job awaits it. Pooled or reused, like every Myriad cell: its
    /// version makes each <c>ValueTask</c> single-use.
    /// </summary>
    /// <remarks>
    /// <para><b>Why.</b> A hand-off (a send that finds a waiting receive, a receive that finds a waiting
    /// send) checks when it claims the waiter whether the job that would consume it can still run
    /// (<c>JobCell.ConsumerCannotRun</c>, which reads the runtime of the cell registered as the waiter's
    /// continuation). A job that awaits a Myriad cell through a <c>ValueTask</c> registers a resume
    /// that is no job cell, and a view's bookkeeping (a <c>JobMap</c> before this cell) stood between
    /// the waiter and that resume anyway: the check saw no job, and a job of a disposed runtime was
    /// handed the item and ended canceled with it.</para>
    /// <para><b>Owner protocol.</b>
    /// 1. A job awaits the <c>ValueTask</c>: the awaiter calls <c>OnCompleted</c> on the job's own
    ///    thread while the job suspends. The cell recognizes the job's resume
    ///    (<see cref="ForeignAwait.OfValueTaskContinuation"/>), writes that thread's runtime id into its
    ///    owner field (<c>_ownerRuntime</c>, as <see cref="ChanRange{T}"/> does), then registers the
    ///    resume; the interlocked exchange of the registration publishes the id with the continuation.
    /// 2. A claimer reads the waiter's continuation (this cell, an acquire) and then the owner: when
    ///    that runtime refuses resumes, it skips the waiter, which ends canceled, and the item goes to
    ///    the next waiter or stays in the channel.
    /// 3. Whatever else awaits the cell (a plain thread, <c>AsTask()</c>, a <c>ValueTask</c> that
    ///    escaped its job) records no owner: it can always run, so such a wait still completes.
    /// A claim made before step 1 (the job has not suspended yet) sees no owner, as for any waiter whose
    /// job is still running towards its suspension; <see cref="ReaderCell{TResult}"/> covers that window
    /// for an item. A send needs nothing there: its item went to a receiver that runs.</para>
    /// </remarks>
    private abstract class ViewCell<TResult> : SourceBox<TResult>
    {
        // As a BCL channel's reader and writer (AllowSynchronousContinuations false): the awaiting
        // code never runs inside the other side's TryWrite, TryRead or Complete (see JobCell).
        private protected override bool ResumesForeignWaitersAsynchronously => true;

        /// <summary>Step 1 of the owner protocol; the rest is <c>SourceBox</c>'s registration of a <c>ValueTask</c>'s continuation (step 3).</summary>
        private protected override void JobRegistering(short token)
        {
            ValidateToken(token); // a stale ValueTask must not set the owner of the cell's next use
            _ownerRuntime = SchedulerContext.RuntimeIdOf(PerThread.Current);
        }

        /// <summary>Resets the cell for its next use (version incremented: the old <c>ValueTask</c> goes stale) and forgets its owner.</summary>
        private protected void ResetViewCell()
        {
            _ownerRuntime = 0;
            ResetBox();
        }
    }

    /// <summary>A waiting <see cref="ChannelWriter{T}.WriteAsync"/>: the send's outcome, with the owner protocol of <see cref="ViewCell{TResult}"/>.</summary>
    private sealed class WriteCell : ViewCell<VoidResult>
    {
        private Job<VoidResult> _send;

        /// <summary>Awaits a pending send.</summary>
        internal static ValueTask Start(Job<VoidResult> send)
        {
            WriteCell cell = BoxPool<WriteCell>.Shared.Rent() ?? new WriteCell();
            short token = cell.Version; // first: the send may complete during the registration, and the cell with it
            cell._send = send;
            send._box!.OnCompleted(cell, send._token);
            return new ValueTask(cell, token);
        }

        /// <summary>The send completed: its outcome becomes this cell's.</summary>
        internal override void Execute(PerThread state)
        {
            Job<VoidResult> send = _send;
            _send = default;
            try
            {
                send.GetAwaiter().GetResult();
            }
            catch (Exception error)
            {
                TrySetException(error, state);
                return;
            }

            TrySetResult(default, state);
        }

        internal override string Describe() => "a channel's ChannelWriter.WriteAsync";

        // Diagnostics only, a racy read: the send is what the write still waits for.
        internal override JobCell? AwaitedCell() => IsCompletedUnchecked ? null : _send._box;

        private protected override void Release()
        {
            ResetViewCell();
            BoxPool<WriteCell>.Shared.Return(this);
        }
    }

    /// <summary>
    /// A wait of the reader view on a receive of the channel: <see cref="ReadCell"/> (ReadAsync),
    /// <see cref="WaitCell"/> (WaitToReadAsync) and <see cref="ReaderEnumerator"/> (ReadAllAsync).
    /// The reader counts it in flight from before its receive starts until it settles (see
    /// <c>ChanReader</c>).
    /// </summary>
    /// <remarks>
    /// <para><b>Handing the item to the job.</b> The claim-time check runs when the receive is claimed;
    /// the job's runtime may start refusing resumes after that and before the job resumes (a hand-off
    /// from another thread racing the disposal, or a claim made before the job registered). A job that
    /// awaits a cell directly gives back what it was handed when its runtime abandons it (the job finds
    /// the cell it awaited); a job that awaits a <c>ValueTask</c> no longer names it by then. So this
    /// cell carries the item onto the job's runtime itself before it completes:
    /// 1. The receive completes with an item; <see cref="Execute"/> runs as its continuation.
    /// 2. If a job registered (the owner protocol) and this thread is not one of that job's runtime,
    ///    the cell keeps the item and queues itself to that runtime
    ///    (<see cref="JobRuntime.ScheduleResume"/>), touching nothing afterwards: another thread may
    ///    run step 3 at once. If that runtime refuses resumes already, step 4 runs here instead.
    ///    Otherwise (no job registered, or this is the job's own runtime) the cell completes here with
    ///    the item, as in step 3.
    /// 3. On the runtime's thread <see cref="Execute"/> runs again and completes the cell with the item;
    ///    the job's resume, registered on the cell, is dispatched there and runs the job on the runtime
    ///    already running this code. The hop replaces the one the resume itself would make (a job woken
    ///    off its runtime is queued back to it) rather than adding one.
    /// 4. The runtime abandons the queued cell (its disposal finished: <see cref="Abandon"/>), or refused
    ///    it in step 2: the item goes back to the reader (the next waiter gets it, or the channel keeps
    ///    it) and the cell completes canceled, which wakes the job into the cancellation every job
    ///    woken after its runtime's disposal ends in.
    /// Not covered: in step 3 the trampoline runs the job inline unless the stack is deep; a job it
    /// defers to the runtime's queue, and that a disposal finishing right then abandons, ends canceled
    /// with the item.</para>
    /// </remarks>
    private abstract class ReaderCell<TResult> : ViewCell<TResult>, IParkedRead
    {
        private ChanReader _reader = null!;

        /// <summary>
        /// The receive the cell waits for, or waited for last. Written only by the flow that starts the
        /// wait, and kept after the receive completed (step 1 runs on the sender's thread), so that
        /// <see cref="TryWithdrawReceive"/> reads it whole. A stale one (its waiter maybe reused since,
        /// even with the same version after 32,768 uses) is never withdrawn: under the channel's lock,
        /// the withdraw reads the waiter's queue membership, then <see cref="_receiveEnded"/>, which
        /// together tell exactly whether this receive still waits there (see
        /// <c>Chan{T}.TryWithdrawReceiver</c>). Cleared when a pooled cell is reset.
        /// </summary>
        private Job<ReceiveResult<T>> _receive;

        /// <summary>
        /// Set by step 1 before it consumes <see cref="_receive"/> (which may send its waiter back to a
        /// pool), cleared before each wait starts.
        /// </summary>
        private bool _receiveEnded;
        private T _held = default!;
        private bool _hopping;

        /// <summary>Whether the reader counts this cell's receive in its waiting reads (a read's, until the receive completed).</summary>
        private bool _reading;

        private protected ChanReader Reader => _reader;

        /// <summary>Starts the receive of a read (counted in the reader's waiting reads) and waits for it.</summary>
        private protected void ReadFrom(ChanReader reader, CancellationToken cancellationToken)
        {
            Job<ReceiveResult<T>> receive = reader.BeginReceive(cancellationToken, read: true);
            _reading = true;
            WaitFor(reader, receive);
        }

        /// <summary>Whether the reader still counts this cell's receive as a waiting read; it no longer does once asked.</summary>
        private protected bool TakeReading()
        {
            bool reading = _reading;
            _reading = false;
            return reading;
        }

        /// <summary>Waits for <paramref name="receive"/>, which the reader counted this cell in flight for; handles it at once if it completed.</summary>
        private protected void WaitFor(ChanReader reader, Job<ReceiveResult<T>> receive)
        {
            _reader = reader;
            _receive = receive;
            _receiveEnded = false; // step 1 (below, or the continuation registered below) sets it
            if (receive._box is not { } box || box.IsCompletedNoThrow(receive._token))
            {
                OnReceived(PerThread.Current); // a wait that waits again may have a job registered: step 2 still looks
            }
            else
            {
                box.OnCompleted(this, receive._token); // step 1 runs here if the receive completed meanwhile
            }
        }

        /// <summary>Step 1, or step 3 while the cell carries an item onto its job's runtime.</summary>
        internal override void Execute(PerThread state)
        {
            if (_hopping)
            {
                T item = _held;
                _held = default!;
                _hopping = false;
                Deliver(item, state);
                return;
            }

            OnReceived(state);
        }

        private void OnReceived(PerThread state)
        {
            Job<ReceiveResult<T>> receive = _receive; // kept: see the field
            Volatile.Write(ref _receiveEnded, true); // before the consume below frees the waiter for reuse
            ReceiveResult<T> result;
            try
            {
                result = receive.GetAwaiter().GetResult();
            }
            catch (Exception error)
            {
                NoItem(error, state);
                return;
            }

            if (result.Ok)
            {
                OnItem(result.Value, state);
            }
            else
            {
                NoItem(null, state);
            }
        }

        /// <summary>
        /// Withdraws the cell's receive if it still waits in the channel (see
        /// <c>Chan{T}.TryWithdrawReceiver</c>): no item can reach it any more, and it completes with
        /// <paramref name="reason"/>, which step 1 treats as a cancellation of the read. False when the
        /// receive is over: the cell then ends as it would have (with an item, the close, or the
        /// cancellation), parked or carrying an item included.
        /// </summary>
        private protected bool TryWithdrawReceive(Exception reason) => _reader.Channel.TryWithdrawReceiver(_receive, ref _receiveEnded, reason);

        /// <summary>The receive got an item (a wait first offers it to waiting reads).</summary>
        private protected virtual void OnItem(T item, PerThread state) => HandOver(item, state);

        /// <summary>Step 2: delivers the item here, or carries it to its job's runtime, or gives it back.</summary>
        private protected void HandOver(T item, PerThread state)
        {
            short owner = Volatile.Read(ref _ownerRuntime);
            if (owner <= 0 || owner == SchedulerContext.RuntimeIdOf(state))
            {
                Deliver(item, state);
                return;
            }

            if (!RuntimeRegistry.RefusesResumes(owner) && RuntimeRegistry.Find(owner) is { } runtime)
            {
                if (TakeReading())
                {
                    _reader.ReadEnded(); // the item travels on: the read no longer waits in the channel
                }

                _held = item;
                _hopping = true;
                runtime.ScheduleResume(this, state); // nothing may be touched after this
                return;
            }

            GiveUp(item, state);
        }

        /// <summary>Step 4 for a cell its runtime abandoned while it carried an item; a cell queued for any other reason runs elsewhere.</summary>
        internal override void Abandon()
        {
            if (!_hopping)
            {
                base.Abandon(); // step 1 deferred by the trampoline: it runs on the thread pool
                return;
            }

            T item = _held;
            _held = default!;
            _hopping = false;
            GiveUp(item, PerThread.Current);
        }

        private void GiveUp(T item, PerThread state)
        {
            _reader.GiveBack(item, TakeReading(), state);
            TrySetException(new OperationCanceledException("The job's runtime was disposed before the job could resume; the item it was handed went back to the channel."), state);
        }

        /// <summary>Completes the cell with an item, on the job's runtime (or where nobody's job waits); settles it in the reader first.</summary>
        private protected abstract void Deliver(T item, PerThread state);

        /// <summary>The receive ended without an item: <paramref name="error"/> is null at a clean close, else the close error or the cancellation.</summary>
        private protected abstract void NoItem(Exception? error, PerThread state);

        /// <summary>
        /// <see cref="NoItem"/> of a read that yields items (a read, an enumeration): a close ends it as
        /// <see cref="ReadFoundClosed"/> says, a cancellation fails it.
        /// </summary>
        private protected void ReadEndedWithoutItem(Exception? error, PerThread state)
        {
            if (error is null || IsCloseError(error))
            {
                ReadFoundClosed(state);
                return;
            }

            Reader.Settled(TakeReading());
            TrySetException(error, state); // canceled
        }

        /// <summary>Whether <paramref name="error"/> is the channel's close error (not a cancellation of the read).</summary>
        private protected bool IsCloseError(Exception error) => ReferenceEquals(error, _reader.Channel.CloseError);

        /// <summary>
        /// For a read whose receive found the channel closed and drained (or closed with an error and
        /// drained): the reader may still keep an item, or have one on its way (see
        /// <c>ChanReader.CloseRead</c>); the read ends with the close only when it has not.
        /// </summary>
        private protected void ReadFoundClosed(PerThread state)
        {
            switch (_reader.CloseRead(this, TakeReading(), out T item))
            {
                case ClosedRead.Item:
                    HandOver(item, state);
                    break;
                case ClosedRead.Closed:
                    EndClosed(state);
                    break;
                default:
                    break; // parked: TakeItem or EndClosed comes later
            }
        }

        /// <summary>A parked read gets an item: handed over as one its receive got.</summary>
        void IParkedRead.TakeItem(T item, PerThread state) => HandOver(item, state);

        void IParkedRead.EndClosed(PerThread state) => EndClosed(state);

        /// <summary>A read ends with the close (already settled in the reader); a wait never parks.</summary>
        private protected virtual void EndClosed(PerThread state) => throw new InvalidOperationException("Only a read parks.");

        // Diagnostics only, a racy read: the receive is what the cell still waits for.
        internal override JobCell? AwaitedCell() => IsCompletedUnchecked ? null : _receive._box;

        /// <summary>Clears what a use left (for a pooled cell, before it goes back to its pool).</summary>
        private protected void ResetReaderCell()
        {
            _reader = null!;
            _receive = default;
            ResetViewCell();
        }
    }

    /// <summary>A waiting <see cref="ChannelReader{T}.ReadAsync"/>.</summary>
    private sealed class ReadCell : ReaderCell<T>
    {
        internal static ValueTask<T> Start(ChanReader reader, CancellationToken cancellationToken)
        {
            ReadCell cell = BoxPool<ReadCell>.Shared.Rent() ?? new ReadCell();
            short token = cell.Version;
            cell.ReadFrom(reader, cancellationToken);
            return new ValueTask<T>(cell, token);
        }

        private protected override void Deliver(T item, PerThread state)
        {
            Reader.Settled(TakeReading()); // completes the reader's Completion now if that was the last item of a closed channel
            TrySetResult(item, state);
        }

        private protected override void NoItem(Exception? error, PerThread state) => ReadEndedWithoutItem(error, state);

        private protected override void EndClosed(PerThread state)
        {
            Exception? error = Reader.Channel.CloseError;
            TrySetException(
                error is null ? ChanErrors.ForReceive()
                : error is OperationCanceledException ? error
                : ChanErrors.ForReceive(error), // a BCL reader's ReadAsync wraps the completion error
                state);
        }

        internal override string Describe() => "a channel's ChannelReader.ReadAsync";

        /// <summary>
        /// The job awaiting this read was abandoned by its runtime's disposal after the read handed it an
        /// item (a hand-over that found no owner yet delivered it here while the job was registering, so
        /// nothing carried it to the job's runtime): the item goes back to the channel, as a receive
        /// waiter's does.
        /// </summary>
        internal override void GiveBackUnconsumed()
        {
            Chan<T> channel = Reader.Channel; // before the consumption recycles the cell
            if (ErrorUnchecked is null)
            {
                channel.GiveBack(GetResult(Version));
            }
        }

        private protected override void Release()
        {
            ResetReaderCell();
            BoxPool<ReadCell>.Shared.Return(this);
        }
    }

    /// <summary>A waiting <see cref="ChannelReader{T}.WaitToReadAsync"/>: the item it receives is kept by the reader.</summary>
    /// <remarks>A wait behind which reads of the reader wait hands its item to them and waits again
    /// (see <c>ChanReader</c>, "Serving a waiting read"), as a BCL wait stays pending while a waiting
    /// read takes the item.</remarks>
    private sealed class WaitCell : ReaderCell<bool>
    {
        private CancellationToken _token;

        internal static ValueTask<bool> Start(ChanReader reader, CancellationToken cancellationToken)
        {
            Job<ReceiveResult<T>> receive = reader.BeginReceive(cancellationToken, read: false);
            WaitCell cell = BoxPool<WaitCell>.Shared.Rent() ?? new WaitCell();
            short token = cell.Version;
            cell._token = cancellationToken;
            cell.WaitFor(reader, receive);
            return new ValueTask<bool>(cell, token);
        }

        private protected override void OnItem(T item, PerThread state)
        {
            switch (Reader.OfferToReads(item, out IParkedRead? parked))
            {
                case Offered.NoRead:
                    HandOver(item, state);
                    break;
                case Offered.Kept:
                    TrySetResult(true, state); // settled: the reader keeps the item
                    break;
                case Offered.ToParkedRead:
                    parked!.TakeItem(item, state);
                    WaitAgain();
                    break;
                default:
                    WaitAgain();
                    break;
            }
        }

        /// <summary>The item went to a read: the wait goes on with a fresh receive, still counted in flight.</summary>
        private void WaitAgain() => WaitFor(Reader, Reader.Channel.ReceiveOkAsync(_token));

        private protected override void Deliver(T item, PerThread state)
        {
            Reader.Keep(item, state);
            TrySetResult(true, state);
        }

        private protected override void NoItem(Exception? error, PerThread state)
        {
            bool kept = Reader.WaitEnded();
            if (kept && (error is null || IsCloseError(error)))
            {
                TrySetResult(true, state); // closed, but the reader still keeps an item (a BCL reader then says true)
            }
            else if (error is null)
            {
                TrySetResult(false, state);
            }
            else
            {
                TrySetException(error, state); // canceled, or closed with an error (a BCL reader's WaitToReadAsync throws it)
            }
        }

        internal override string Describe() => "a channel's ChannelReader.WaitToReadAsync";

        private protected override void Release()
        {
            _token = default;
            ResetReaderCell();
            BoxPool<WaitCell>.Shared.Return(this);
        }
    }

    /// <summary>What <see cref="ChannelReader{T}.ReadAllAsync"/> returns: each enumeration reads through the reader.</summary>
    private sealed class ReaderRange(ChanReader reader, CancellationToken cancellationToken) : IAsyncEnumerable<T>
    {
        /// <summary>An enumerator whose token is the one given to ReadAllAsync, this one, or both linked (as a BCL async iterator's).</summary>
        public IAsyncEnumerator<T> GetAsyncEnumerator(CancellationToken enumeratorToken = default)
        {
            CancellationToken token = EnumerationTokens.Combine(cancellationToken, enumeratorToken, out CancellationTokenSource? linked);
            return new ReaderEnumerator(reader, token, linked);
        }
    }

    /// <summary>
    /// An enumeration of <see cref="ChannelReader{T}.ReadAllAsync"/>, as a BCL reader's (a loop of
    /// <c>WaitToReadAsync</c> and <c>TryRead</c>): it ends once the channel is closed and drained, throws
    /// the close error itself, and checks its token before every item. It is the cell its own
    /// <see cref="MoveNextAsync"/> returns, reused from one call to the next (the enumerator contract
    /// allows one at a time).
    /// </summary>
    /// <remarks>
    /// <para><b>One call at a time, checked.</b> A <see cref="MoveNextAsync"/> that must wait marks the
    /// cell waiting; consuming its outcome (<see cref="Release"/>) clears the mark. A call that finds it
    /// set throws <see cref="InvalidOperationException"/> before it touches the reader: a second read
    /// through the same cell would overwrite the first's receive, and both items would be lost.</para>
    /// <para><b>Disposal while a <see cref="MoveNextAsync"/> waits</b>, as <see cref="ChanRange{T}"/>'s
    /// (a BCL reader's enumerator throws <see cref="NotSupportedException"/> then; withdrawing serves
    /// the caller who gave up better):
    /// 1. <see cref="DisposeAsync"/> reads the waiting mark, then withdraws the receive if it still
    ///    waits in the channel (<see cref="ReaderCell{TResult}.TryWithdrawReceive"/>); the receive ends
    ///    with <see cref="OperationCanceledException"/>, and the cell's step 1 ends the read as a
    ///    canceled one (settled in the reader, nothing taken).
    /// 2. A receive that no longer waits (it got an item, the close, or the token's cancellation; the
    ///    read may be parked on the close or carrying its item to its job's runtime) runs its course:
    ///    an item stays the result of the waiting <see cref="MoveNextAsync"/>.
    /// 3. The linked token source, if any, is disposed last, so that a still queued receive is never
    ///    left registered on no token.</para>
    /// </remarks>
    private sealed class ReaderEnumerator(ChanReader reader, CancellationToken cancellationToken, CancellationTokenSource? linked) : ReaderCell<bool>, IAsyncEnumerator<T>
    {
        private T _current = default!;

        /// <summary>Set while a <see cref="MoveNextAsync"/> that waits has not had its outcome consumed.</summary>
        private bool _waiting;

        /// <summary>Set by <see cref="DisposeAsync"/>; once set, never unset.</summary>
        private bool _disposed;

        public T Current => _current;

        /// <summary>As <see cref="ReadCell.GiveBackUnconsumed"/>: the item a <c>MoveNextAsync</c> got for an abandoned job goes back to the channel.</summary>
        internal override void GiveBackUnconsumed()
        {
            Chan<T> channel = Reader.Channel;
            T item = _current;
            if (ErrorUnchecked is null && GetResult(Version))
            {
                _current = default!;
                channel.GiveBack(item);
            }
        }

        public ValueTask<bool> MoveNextAsync()
        {
            if (_waiting)
            {
                throw ChanErrors.MoveNextWhilePending();
            }

            if (_disposed)
            {
                // As a compiler-generated async iterator: a disposed enumeration has ended, and it
                // must not take an item from the channel that nobody would see.
                return new ValueTask<bool>(false);
            }

            if (cancellationToken.IsCancellationRequested)
            {
                return ValueTask.FromCanceled<bool>(cancellationToken);
            }

            if (reader.TryRead(out T? item))
            {
                _current = item;
                return new ValueTask<bool>(true);
            }

            short token = Version;
            ReadFrom(reader, cancellationToken);
            _waiting = true; // after: a read that threw left nothing waiting (nobody can consume the outcome before this returns)
            return new ValueTask<bool>(this, token);
        }

        /// <summary>Ends the enumeration, withdrawing a waiting <see cref="MoveNextAsync"/> that no item reached yet (see the remarks).</summary>
        public ValueTask DisposeAsync()
        {
            _disposed = true;
            if (Volatile.Read(ref _waiting))
            {
                TryWithdrawReceive(ChanErrors.ReadWithdrawnByDispose()); // steps 1 and 2
            }

            linked?.Dispose(); // step 3
            return default;
        }

        private protected override void Deliver(T item, PerThread state)
        {
            _current = item;
            Reader.Settled(TakeReading());
            TrySetResult(true, state);
        }

        private protected override void NoItem(Exception? error, PerThread state) => ReadEndedWithoutItem(error, state);

        private protected override void EndClosed(PerThread state)
        {
            if (Reader.Channel.CloseError is { } error)
            {
                TrySetException(error, state); // the close error itself, as a BCL reader's WaitToReadAsync loop throws it
            }
            else
            {
                TrySetResult(false, state);
            }
        }

        internal override string Describe() => "await foreach over a channel's ChannelReader.ReadAllAsync";

        private protected override void Release()
        {
            _waiting = false;
            ResetViewCell(); // the reader stays: the next MoveNextAsync reads through it
        }
    }
}
