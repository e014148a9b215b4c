package io.asymnvm.frontend;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.fabric.Completion;
import io.asymnvm.core.fabric.Fabric;
import io.asymnvm.core.fabric.FabricConnection;
import io.asymnvm.core.fabric.ForwardingConnection;
import io.asymnvm.core.fabric.ForwardingFabric;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A fabric that counts the FLUSHes and WRITEs posted on its connections and, while {@link #hold} is on, holds
 * FLUSHes back (they are posted to the node only at {@link #release}), as a slow node would.
 */
final class GatedFabric extends ForwardingFabric {
    final AtomicLong flushes = new AtomicLong();
    final AtomicLong writes = new AtomicLong();
    private record Held(Completion outer, Runnable post) {
    }

    private final List<Held> held = new ArrayList<>();
    private boolean holding;

    GatedFabric(Fabric delegate) {
        super(delegate);
    }

    synchronized void hold() {
        holding = true;
    }

    synchronized int heldFlushes() {
        return held.size();
    }

    /** Stops holding and posts the held FLUSHes. */
    void release() {
        List<Held> now;
        synchronized (this) {
            holding = false;
            now = new ArrayList<>(held);
            held.clear();
        }
        now.forEach(h -> h.post().run());
    }

    @Override
    protected FabricConnection wrap(FabricConnection connection) {
        return new ForwardingConnection(connection) {
            @Override
            public Completion write(int regionId, long offset, byte[] data, int dataOffset, int length) {
                writes.incrementAndGet();
                return super.write(regionId, offset, data, dataOffset, length);
            }

            @Override
            public Completion flush(long stamp, boolean stamped) {
                flushes.incrementAndGet();
                synchronized (GatedFabric.this) {
                    if (holding) {
                        Completion outer = new Completion(counters());
                        held.add(new Held(outer, () -> {
                            try {
                                Completion inner = delegate().flush(stamp, stamped).await();
                                outer.complete(inner.bytes(), inner.value1(), inner.value2());
                            } catch (AsymNvmException e) {
                                outer.fail(e);
                            }
                        }));
                        return outer;
                    }
                }
                return super.flush(stamp, stamped);
            }

            @Override
            public void close() {
                super.close();
                List<Held> dropped;
                synchronized (GatedFabric.this) {
                    dropped = new ArrayList<>(held);
                    held.clear();
                }
                dropped.forEach(h -> h.outer().fail(lost()));
            }
        };
    }

    static AsymNvmException lost() {
        return new AsymNvmException(ErrorCode.CONNECTION_LOST, "closed");
    }
}
