package io.asymnvm.core.fabric;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The completion of one posted operation. Completed exactly once, by the transport, with a result (bytes
 * and/or two values) or an error. Any number of threads may {@link #await()} it; every await of a caller is
 * counted as one round trip waited on the connection's {@link FabricCounters}, whether or not the result had
 * already arrived: it is the caller's decision to depend on the network that the counter measures.
 *
 * <p>Waiting follows a {@link WaitPolicy}. The transport completes the completion on its own thread (the tcp
 * fabric's Netty event loop, the local fabric's caller): a spinning waiter sees the volatile {@code done} flag at
 * once, with no hand-off; only a parked waiter needs that thread to unpark it. Every park is counted
 * ({@link FabricCounters#parks()}). {@code done} is written before the waiter list is read and a waiter registers
 * before it reads {@code done} again, both volatile, so a waiter either sees {@code done} or is seen and unparked.
 */
public final class Completion {
    /** The policy of {@link #await()} and {@link #await(long)}: one adaptive policy for the whole process. */
    private static final WaitPolicy DEFAULT_POLICY = WaitPolicy.adaptive();
    private static final long DEFAULT_TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(30);

    private final FabricCounters counters;
    private volatile boolean done;
    private byte[] bytes;
    private long value1;
    private long value2;
    private AsymNvmException error;
    private volatile Thread[] waiters = new Thread[0];

    public Completion(FabricCounters counters) {
        this.counters = counters;
    }

    /** A completion already failed, for operations posted on a closed connection. */
    public static Completion failed(FabricCounters counters, AsymNvmException error) {
        Completion c = new Completion(counters);
        c.fail(error);
        return c;
    }

    public void complete(byte[] bytes, long value1, long value2) {
        this.bytes = bytes;
        this.value1 = value1;
        this.value2 = value2;
        signal();
    }

    public void fail(AsymNvmException error) {
        this.error = error;
        signal();
    }

    private void signal() {
        done = true;
        for (Thread w : waiters) {
            LockSupport.unpark(w);
        }
    }

    public boolean isDone() {
        return done;
    }

    public boolean isFailed() {
        return done && error != null;
    }

    /** Waits (one round trip) and rethrows a failure as {@link AsymNvmException}. */
    public Completion await() {
        return await(DEFAULT_TIMEOUT_NANOS);
    }

    public Completion await(long timeoutNanos) {
        return await(DEFAULT_POLICY, timeoutNanos);
    }

    /** Waits (one round trip) as {@code policy} says and rethrows a failure as {@link AsymNvmException}. */
    public Completion await(WaitPolicy policy) {
        return await(policy, DEFAULT_TIMEOUT_NANOS);
    }

    public Completion await(WaitPolicy policy, long timeoutNanos) {
        counters.roundTripWaited();
        if (!done) {
            waitFor(policy, timeoutNanos);
        }
        if (error != null) {
            throw new AsymNvmException(error.errorCode(), error.detail(), error);
        }
        return this;
    }

    /**
     * Waits until this completion is done, successfully or not, as {@code policy} says, at most the default
     * timeout; neither counts a round trip nor throws its failure. For a caller that uses another caller's
     * operation as a gate (group commit waits for the FLUSH in flight before posting the next one).
     */
    public void awaitSettled(WaitPolicy policy) {
        if (!done) {
            try {
                waitFor(policy, DEFAULT_TIMEOUT_NANOS);
            } catch (AsymNvmException timedOut) {
                // the operation's owner sees the timeout; the gate simply opens
            }
        }
    }

    private void waitFor(WaitPolicy policy, long timeoutNanos) {
        long start = System.nanoTime();
        long spin = Math.min(policy.spinNanos(), timeoutNanos);
        long now = start;
        while (!done && now - start < spin) {
            Thread.onSpinWait();
            now = System.nanoTime();
        }
        if (done) {
            policy.observed(spin, now - start);
            return;
        }
        if (spin >= timeoutNanos) {
            throw timedOut(timeoutNanos);
        }
        park(start, timeoutNanos);
        policy.observed(spin, System.nanoTime() - start);
    }

    private void park(long start, long timeoutNanos) {
        Thread me = Thread.currentThread();
        synchronized (this) {
            Thread[] ws = waiters;
            Thread[] grown = java.util.Arrays.copyOf(ws, ws.length + 1);
            grown[ws.length] = me;
            waiters = grown;
        }
        long deadline = start + timeoutNanos;
        while (!done) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw timedOut(timeoutNanos);
            }
            counters.parked();
            LockSupport.parkNanos(this, left);
        }
    }

    private static AsymNvmException timedOut(long timeoutNanos) {
        return new AsymNvmException(ErrorCode.TIMEOUT, "remote operation did not complete within "
                + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms");
    }

    /** Bytes of a READ or a control reply; valid after a successful await. */
    public byte[] bytes() {
        return bytes;
    }

    /** CAS witness, or bytes persisted for a FLUSH. */
    public long value1() {
        return value1;
    }

    /** Persist calls for a FLUSH. */
    public long value2() {
        return value2;
    }

    /** The failure, or null; valid once done. */
    public AsymNvmException error() {
        return error;
    }
}
