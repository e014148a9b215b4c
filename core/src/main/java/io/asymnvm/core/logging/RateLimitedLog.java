package io.asymnvm.core.logging;

import org.slf4j.Logger;
import org.slf4j.helpers.FormattingTuple;
import org.slf4j.helpers.MessageFormatter;

import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.function.LongSupplier;

/**
 * One kind of WARN line that a remote peer can cause at will (a refused attach, a refused connection, an oversized
 * frame): at most one line per interval (one second by default) is written; the lines dropped meanwhile are
 * counted and the next line written says how many ("; 9999 more like this suppressed since the last such line").
 * Whoever counts the events themselves keeps an exact counter of its own: this class only bounds the log.
 *
 * <p>Thread-safe; the critical section is a clock read and two counters, the line is formatted only when written.
 */
public final class RateLimitedLog {
    /** Default: at most one line per second per kind. */
    public static final long DEFAULT_INTERVAL_MILLIS = 1_000;

    private final BiConsumer<String, Throwable> sink;
    private final LongSupplier nanoClock;
    private final long intervalNanos;
    private boolean written;
    private long lastWritten;
    private long suppressed;
    private long lines;
    private long suppressedTotal;

    /**
     * Lines go to {@code sink} (with the throwable of the arguments, if any), at most one per {@code intervalMillis} of {@code nanoClock} (a seam for tests; use
     * {@link #warn(Logger)} otherwise).
     */
    public RateLimitedLog(BiConsumer<String, Throwable> sink, LongSupplier nanoClock, long intervalMillis) {
        if (intervalMillis <= 0) {
            throw new IllegalArgumentException("rate-limit interval must be positive: " + intervalMillis + " ms");
        }
        this.sink = sink;
        this.nanoClock = nanoClock;
        this.intervalNanos = TimeUnit.MILLISECONDS.toNanos(intervalMillis);
    }

    /** WARN lines of {@code logger}, at most one per second. */
    public static RateLimitedLog warn(Logger logger) {
        return new RateLimitedLog(logger::warn, System::nanoTime, DEFAULT_INTERVAL_MILLIS);
    }

    /**
     * Writes the line (SLF4J {@code {}} placeholders) unless one was written less than an interval ago; returns
     * whether it was written.
     */
    public boolean log(String format, Object... args) {
        long dropped;
        synchronized (this) {
            long now = nanoClock.getAsLong();
            if (written && now - lastWritten < intervalNanos) {
                suppressed++;
                suppressedTotal++;
                return false;
            }
            written = true;
            lastWritten = now;
            dropped = suppressed;
            suppressed = 0;
            lines++;
        }
        FormattingTuple formatted = MessageFormatter.arrayFormat(format, args);
        String line = formatted.getMessage();
        sink.accept(dropped == 0 ? line : line + "; " + dropped + " more like this suppressed since the last such line",
                formatted.getThrowable());
        return true;
    }

    /** Lines written so far. */
    public synchronized long lines() {
        return lines;
    }

    /** Lines dropped so far (whether or not a later line reported them yet). */
    public synchronized long suppressed() {
        return suppressedTotal;
    }
}
