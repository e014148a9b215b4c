package io.asymnvm.core.fabric.tcp;

import io.netty.channel.SelectStrategy;
import io.netty.channel.SelectStrategyFactory;
import io.netty.util.IntSupplier;

/**
 * A Netty {@link SelectStrategy} that keeps an event loop polling (non-blocking {@code epoll_wait}/{@code selectNow})
 * for a bounded window after its last activity, then lets it block as the default strategy does.
 *
 * <p>Why. A loop blocked in {@code epoll_wait} must be woken by the kernel when a frame arrives: on a loaded machine
 * that is a scheduling delay on every round trip (issue 8, goal 5: one on the backend, one on the client). A request
 * that arrives within the window after the previous one is picked up by a loop that is already running. Unlike
 * Netty's {@code SelectStrategy.BUSY_WAIT} (epoll only), which spins in native code until an event arrives and so
 * never gives up while the peer is silent, each poll here returns to the loop, which runs its tasks and asks again:
 * the spin stops by itself {@code spinNanos} after the last event, and submitted tasks need no wake-up while it
 * polls. A window of 0 is the default strategy.
 *
 * <p>Threads: one instance per event loop ({@link #factory}), used only by that loop's thread.
 */
final class LoopSpinStrategy implements SelectStrategy {
    private final long spinNanos;
    private long lastActive = System.nanoTime();
    /** The previous call returned {@link #SELECT}: the loop blocked, and is now back because something happened. */
    private boolean blocked;
    private long spins;

    LoopSpinStrategy(long spinNanos) {
        this.spinNanos = spinNanos;
    }

    /** A factory of one strategy per event loop, each spinning at most {@code spinNanos} after its last event. */
    static SelectStrategyFactory factory(long spinNanos) {
        return () -> new LoopSpinStrategy(spinNanos);
    }

    @Override
    public int calculateStrategy(IntSupplier selectSupplier, boolean hasTasks) throws Exception {
        if (hasTasks) {
            blocked = false;
            lastActive = System.nanoTime();
            return selectSupplier.get();
        }
        long now = System.nanoTime();
        if (blocked) { // woken from a blocking wait: an event or a task, so the window starts again
            blocked = false;
            lastActive = now;
        }
        if (now - lastActive < spinNanos) {
            int ready = selectSupplier.get();
            if (ready > 0) {
                lastActive = now;
            } else {
                spins++;
                Thread.onSpinWait();
            }
            return ready;
        }
        blocked = true;
        return SELECT;
    }

    /** Empty polls so far (tests: the loop did spin). */
    long spins() {
        return spins;
    }
}
