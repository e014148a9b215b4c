package io.asymnvm.system;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.fabric.Completion;
import io.asymnvm.core.fabric.Fabric;
import io.asymnvm.core.fabric.FabricConnection;
import io.asymnvm.core.fabric.ForwardingConnection;
import io.asymnvm.core.fabric.ForwardingFabric;
import io.asymnvm.core.layout.RegionIds;

import java.util.Objects;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * A {@link Fabric} that wraps another and tears one WRITE (DESIGN §4, "partial network writes"): armed with
 * {@link #tearSemanticWrite}, the n-th WRITE to a frontend's semantic ring (counted over every connection of this
 * fabric from the arming) lands only a prefix, a random number of bytes below its length and possibly none, as a
 * transfer cut off mid-way would; then the connection fails: it is closed and the write's completion fails with
 * {@code CONNECTION_LOST}, and so does everything posted on it afterwards. Everything else passes through.
 *
 * <p>The prefix always stops before the last byte in which the record differs from what the ring held there
 * (read just before), so the write is really torn: a prefix that only rewrote identical bytes would have
 * landed the whole record.
 *
 * <p>Thread-safe. The callback runs on the posting thread right after the prefix landed and before the failed
 * completion is returned, so a test can crash the frontend before it sees the failure (and reconnects).
 */
final class FaultInjectingFabric extends ForwardingFabric {
    private static final long PREFIX_TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(10);

    /** The torn write: its region, ring offset and length, and how many leading bytes landed. */
    record TornWrite(int regionId, long offset, int length, int landed) {
    }

    /** Index of the last byte where the record differs from what the ring held, or -1. */
    private static int lastDifference(byte[] before, byte[] data, int dataOffset, int length) {
        for (int i = length - 1; i >= 0; i--) {
            if (before[i] != data[dataOffset + i]) {
                return i;
            }
        }
        return -1;
    }

    private final AtomicLong semanticWrites = new AtomicLong();
    private long tearAt = -1;
    private Random random;
    private Consumer<TornWrite> onTorn;
    private volatile TornWrite torn;

    FaultInjectingFabric(Fabric delegate) {
        super(delegate);
    }

    /**
     * Tears the {@code n}-th semantic-ring WRITE from now ({@code n = 0}: the next one); {@code random} picks the
     * prefix length, {@code onTorn} (may be null) is told once it landed. One tear per arming.
     */
    synchronized void tearSemanticWrite(long n, Random random, Consumer<TornWrite> onTorn) {
        if (n < 0) {
            throw new IllegalArgumentException("write index must be >= 0: " + n);
        }
        this.tearAt = semanticWrites.get() + n;
        this.random = Objects.requireNonNull(random, "random");
        this.onTorn = onTorn;
        this.torn = null;
    }

    /** The write torn since the last arming, or null. */
    TornWrite torn() {
        return torn;
    }

    /** WRITEs to semantic rings posted through this fabric so far. */
    long semanticWrites() {
        return semanticWrites.get();
    }

    @Override
    protected FabricConnection wrap(FabricConnection connection) {
        return new TearingConnection(connection);
    }

    /** Whether this semantic write is the one to tear (counts it). */
    private synchronized boolean tearing() {
        long index = semanticWrites.getAndIncrement();
        if (index != tearAt) {
            return false;
        }
        tearAt = -1;
        return true;
    }

    /** A prefix length in [0, limit]. */
    private synchronized int prefix(int limit) {
        return random.nextInt(limit + 1);
    }

    private final class TearingConnection extends ForwardingConnection {
        private final FabricConnection c;

        TearingConnection(FabricConnection c) {
            super(c);
            this.c = c;
        }

        @Override
        public Completion write(int regionId, long offset, byte[] data, int dataOffset, int length) {
            if (length == 0 || RegionIds.kindOf(regionId) != RegionIds.KIND_SEMANTIC || !tearing()) {
                return c.write(regionId, offset, data, dataOffset, length);
            }
            byte[] before = c.read(regionId, offset, length).await(PREFIX_TIMEOUT_NANOS).bytes();
            int last = lastDifference(before, data, dataOffset, length);
            int landed = prefix(last < 0 ? length - 1 : last);
            if (landed > 0) {
                c.write(regionId, offset, data, dataOffset, landed).await(PREFIX_TIMEOUT_NANOS);
            }
            c.close();
            TornWrite t = new TornWrite(regionId, offset, length, landed);
            torn = t;
            Consumer<TornWrite> callback;
            synchronized (FaultInjectingFabric.this) {
                callback = onTorn;
            }
            if (callback != null) {
                callback.accept(t);
            }
            return Completion.failed(c.counters(), new AsymNvmException(ErrorCode.CONNECTION_LOST,
                    "connection failed after " + landed + " of " + length + " bytes of a WRITE to region "
                            + regionId + " at " + offset + " landed"));
        }
    }
}
