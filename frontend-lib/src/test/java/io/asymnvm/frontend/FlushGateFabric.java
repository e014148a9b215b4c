package io.asymnvm.frontend;

import io.asymnvm.core.fabric.Completion;
import io.asymnvm.core.fabric.Fabric;
import io.asymnvm.core.fabric.FabricConnection;
import io.asymnvm.core.fabric.ForwardingConnection;
import io.asymnvm.core.fabric.ForwardingFabric;
import io.asymnvm.core.layout.RegionIds;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * A fabric that, once {@link #holdNextFlush armed}, holds the next FLUSH in its posting thread until a condition
 * holds (for example: every committer's transaction is posted): the records of concurrent committers then pile
 * up behind one FLUSH in flight, deterministically, which is the case group commit exists for.
 */
final class FlushGateFabric extends ForwardingFabric {
    private static final long HOLD_LIMIT_SECONDS = 30;

    private final AtomicInteger semanticWrites = new AtomicInteger();
    private volatile BooleanSupplier release;
    private final AtomicBoolean armed = new AtomicBoolean();

    FlushGateFabric(Fabric delegate) {
        super(delegate);
    }

    /** The next FLUSH waits until {@code condition} holds (polled; at most 30 s, then the test fails). */
    void holdNextFlush(BooleanSupplier condition) {
        release = condition;
        armed.set(true);
    }

    /** Semantic-ring WRITEs posted through this fabric. */
    int semanticWrites() {
        return semanticWrites.get();
    }

    @Override
    protected FabricConnection wrap(FabricConnection connection) {
        return new ForwardingConnection(connection) {
            @Override
            public Completion write(int regionId, long offset, byte[] data, int dataOffset, int length) {
                Completion done = delegate().write(regionId, offset, data, dataOffset, length);
                if (RegionIds.kindOf(regionId) == RegionIds.KIND_SEMANTIC) {
                    semanticWrites.incrementAndGet();
                }
                return done;
            }

            @Override
            public Completion flush(long stamp, boolean stamped) {
                if (armed.compareAndSet(true, false)) {
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(HOLD_LIMIT_SECONDS);
                    while (!release.getAsBoolean()) {
                        if (System.nanoTime() > deadline) {
                            throw new AssertionError("held FLUSH: its release condition did not hold in "
                                    + HOLD_LIMIT_SECONDS + " s");
                        }
                        LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(50));
                    }
                }
                return delegate().flush(stamp, stamped);
            }
        };
    }
}
