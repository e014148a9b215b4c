package io.asymnvm.system;

import io.asymnvm.recovery.crash.SimulatedPowerFailure;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.util.concurrent.atomic.AtomicLong;

/**
 * For the power-failure tests: threads of a node or frontend that die with the simulated power (replayer, shipper,
 * agent) are expected, so during each test this extension counts them instead of printing their stack traces, and
 * passes every other uncaught exception on to the handler that was installed before. Register it with
 * {@code @RegisterExtension}; {@link #count()} is reported with the exploration's figures.
 */
final class DyingThreads implements BeforeEachCallback, AfterEachCallback {
    private final AtomicLong died = new AtomicLong();
    private Thread.UncaughtExceptionHandler previous;

    @Override
    public void beforeEach(ExtensionContext context) {
        previous = Thread.getDefaultUncaughtExceptionHandler();
        Thread.UncaughtExceptionHandler before = previous;
        Thread.setDefaultUncaughtExceptionHandler((t, e) -> {
            if (SimulatedPowerFailure.findIn(e) != null) {
                died.incrementAndGet();
            } else if (before != null) {
                before.uncaughtException(t, e);
            } else {
                System.err.println("Exception in thread \"" + t.getName() + "\"");
                e.printStackTrace();
            }
        });
    }

    @Override
    public void afterEach(ExtensionContext context) {
        Thread.setDefaultUncaughtExceptionHandler(previous);
    }

    /** Threads that died with the power so far in this test. */
    long count() {
        return died.get();
    }
}
