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
 */
public final class Completion {
    private static final long SPIN_NANOS = 20_000;
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
        Thread[] ws;
        synchronized (this) {
            ws = waiters;
        }
        for (Thread w : ws) {
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
        counters.roundTripWaited();
        if (!done) {
            waitFor(timeoutNanos);
        }
        if (error != null) {
            throw new AsymNvmException(error.errorCode(), error.detail(), error);
        }
        return this;
    }

    private void waitFor(long timeoutNanos) {
        long start = System.nanoTime();
        while (!done && System.nanoTime() - start < SPIN_NANOS) {
            Thread.onSpinWait();
        }
        if (done) {
            return;
        }
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
                throw new AsymNvmException(ErrorCode.TIMEOUT, "remote operation did not complete within "
                        + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms");
            }
            LockSupport.parkNanos(this, left);
        }
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
