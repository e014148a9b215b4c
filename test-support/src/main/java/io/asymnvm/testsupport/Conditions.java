package io.asymnvm.testsupport;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

import static org.junit.jupiter.api.Assertions.fail;

/** Waiting on conditions with a deadline (never a fixed sleep). */
public final class Conditions {
    private Conditions() {
    }

    /** How long {@link #awaitTrue(String, BooleanSupplier)} waits: generous, it only matters when a test fails. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(60);

    /** {@link #awaitTrue(String, Duration, BooleanSupplier)} with {@link #DEFAULT_TIMEOUT}. */
    public static void awaitTrue(String what, BooleanSupplier condition) {
        awaitTrue(what, DEFAULT_TIMEOUT, condition, () -> "");
    }

    /** Polls {@code condition} every 200 us until it holds; fails naming {@code what} after {@code timeout}. */
    public static void awaitTrue(String what, Duration timeout, BooleanSupplier condition) {
        awaitTrue(what, timeout, condition, () -> "");
    }

    /** As {@link #awaitTrue(String, Duration, BooleanSupplier)}, the failure adding {@code state}'s description. */
    public static void awaitTrue(String what, Duration timeout, BooleanSupplier condition, Supplier<String> state) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                fail("timed out after " + timeout.toMillis() + " ms waiting for " + what + " " + state.get());
            }
            LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(200));
        }
    }
}
