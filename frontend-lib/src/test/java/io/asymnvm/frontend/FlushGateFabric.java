package io.asymnvm.frontend;

import io.asymnvm.core.fabric.Completion;
import io.asymnvm.core.fabric.Fabric;
import io.asymnvm.core.fabric.FabricConnection;
import io.asymnvm.core.fabric.FabricCounters;
import io.asymnvm.core.layout.RegionIds;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A fabric that, once {@link #holdNextFlush armed}, holds the next FLUSH in its posting thread until a given
 * number of semantic-ring WRITEs have been posted since the arming: the records of concurrent committers then
 * pile up behind one FLUSH in flight, deterministically, which is the case group commit exists for.
 */
final class FlushGateFabric implements Fabric {
    private static final long HOLD_LIMIT_SECONDS = 30;

    private final Fabric delegate;
    private final AtomicInteger semanticWrites = new AtomicInteger();
    private volatile CountDownLatch gate;
    private volatile int writesAtArming;
    private final AtomicBoolean armed = new AtomicBoolean();

    FlushGateFabric(Fabric delegate) {
        this.delegate = delegate;
    }

    /** The next FLUSH waits until {@code records} semantic records were posted from now. */
    void holdNextFlush(int records) {
        writesAtArming = semanticWrites.get();
        gate = new CountDownLatch(records);
        armed.set(true);
    }

    @Override
    public String name() {
        return delegate.name();
    }

    @Override
    public FabricConnection connect() {
        FabricConnection c = delegate.connect();
        return new FabricConnection() {
            @Override
            public Completion read(int regionId, long offset, int length) {
                return c.read(regionId, offset, length);
            }

            @Override
            public Completion write(int regionId, long offset, byte[] data, int dataOffset, int length) {
                Completion done = c.write(regionId, offset, data, dataOffset, length);
                if (RegionIds.kindOf(regionId) == RegionIds.KIND_SEMANTIC) {
                    semanticWrites.incrementAndGet();
                    CountDownLatch g = gate;
                    if (g != null) {
                        g.countDown();
                    }
                }
                return done;
            }

            @Override
            public Completion compareAndSwap(int regionId, long offset, long expected, long update) {
                return c.compareAndSwap(regionId, offset, expected, update);
            }

            @Override
            public Completion flush(long stamp, boolean stamped) {
                if (armed.compareAndSet(true, false)) {
                    try {
                        if (!gate.await(HOLD_LIMIT_SECONDS, TimeUnit.SECONDS)) {
                            throw new AssertionError("held FLUSH: only " + (semanticWrites.get() - writesAtArming)
                                    + " semantic records were posted in " + HOLD_LIMIT_SECONDS + " s");
                        }
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new AssertionError("interrupted while holding a FLUSH", e);
                    }
                }
                return c.flush(stamp, stamped);
            }

            @Override
            public Completion call(byte[] request) {
                return c.call(request);
            }

            @Override
            public FabricCounters counters() {
                return c.counters();
            }

            @Override
            public boolean isOpen() {
                return c.isOpen();
            }

            @Override
            public void close() {
                c.close();
            }
        };
    }

    @Override
    public void close() {
        delegate.close();
    }
}
