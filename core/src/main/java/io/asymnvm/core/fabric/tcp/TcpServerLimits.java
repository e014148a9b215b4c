package io.asymnvm.core.fabric.tcp;

import io.asymnvm.core.Checks;
import io.asymnvm.core.layout.FrameLayout;

/**
 * The limits and thread counts of a {@link TcpNicServer}, immutable. Zero in {@link #maxFrameLength()} or
 * {@link #maxConnections()} means "derive from the node's geometry" and must be {@linkplain #resolve resolved}
 * before the server starts; {@link #validate()} checks every explicit value, with messages naming the value and
 * the limit.
 *
 * <table>
 * <caption>Defaults</caption>
 * <tr><td>event-loop threads</td><td>min(4, cores)</td></tr>
 * <tr><td>worker threads (FLUSH, control calls)</td><td>16</td></tr>
 * <tr><td>max frame length</td><td>largest legal request of the node (derived)</td></tr>
 * <tr><td>max connections</td><td>frontends x connections per frontend + 32 (derived)</td></tr>
 * <tr><td>max connections per frontend id</td><td>4</td></tr>
 * <tr><td>idle timeout</td><td>300 s (0 = never)</td></tr>
 * <tr><td>reply write buffer low / high water mark</td><td>256 KiB / 1 MiB</td></tr>
 * </table>
 */
public final class TcpServerLimits {
    public static final int DEFAULT_WORKER_THREADS = 16;
    public static final int DEFAULT_MAX_CONNECTIONS_PER_FRONTEND = 4;
    public static final long DEFAULT_IDLE_TIMEOUT_MILLIS = 300_000;
    public static final int DEFAULT_WRITE_BUFFER_LOW = 256 << 10;
    public static final int DEFAULT_WRITE_BUFFER_HIGH = 1 << 20;
    /** Connections beyond frontends x per-frontend cap that the derived total allows (tools, reconnect overlap). */
    public static final int UNATTACHED_CONNECTION_ALLOWANCE = 32;
    /** Smallest frame limit: a request header and a small control message. */
    public static final int MIN_FRAME_LENGTH = FrameLayout.LENGTH_FIELD_LENGTH + FrameLayout.REQUEST_HEADER_LENGTH
            + 256;
    public static final int MAX_THREADS = 1024;
    public static final int MAX_CONNECTIONS_LIMIT = 1 << 20;
    public static final long MAX_IDLE_TIMEOUT_MILLIS = 24L * 3600 * 1000;

    /** Every value at its default; frame length and total connections still to be derived. */
    public static final TcpServerLimits DEFAULTS = builder().build();

    private final int eventLoopThreads;
    private final int workerThreads;
    private final int maxFrameLength;
    private final int maxConnections;
    private final int maxConnectionsPerFrontend;
    private final long idleTimeoutMillis;
    private final int writeBufferLowWaterMark;
    private final int writeBufferHighWaterMark;

    private TcpServerLimits(Builder b) {
        this.eventLoopThreads = b.eventLoopThreads;
        this.workerThreads = b.workerThreads;
        this.maxFrameLength = b.maxFrameLength;
        this.maxConnections = b.maxConnections;
        this.maxConnectionsPerFrontend = b.maxConnectionsPerFrontend;
        this.idleTimeoutMillis = b.idleTimeoutMillis;
        this.writeBufferLowWaterMark = b.writeBufferLowWaterMark;
        this.writeBufferHighWaterMark = b.writeBufferHighWaterMark;
    }

    public static Builder builder() {
        return new Builder();
    }

    /** A builder holding this object's values. */
    public Builder toBuilder() {
        return new Builder().eventLoopThreads(eventLoopThreads).workerThreads(workerThreads)
                .maxFrameLength(maxFrameLength).maxConnections(maxConnections)
                .maxConnectionsPerFrontend(maxConnectionsPerFrontend).idleTimeoutMillis(idleTimeoutMillis)
                .writeBufferWaterMarks(writeBufferLowWaterMark, writeBufferHighWaterMark);
    }

    /** min(4, available processors). */
    public static int defaultEventLoopThreads() {
        return Math.min(4, Runtime.getRuntime().availableProcessors());
    }

    /**
     * Fills the derived values: a frame limit of 0 becomes {@code largestLegalFrame}, and an explicit limit below
     * it is refused (a frontend's legitimate writes would be cut off); a connection cap of 0 becomes
     * {@code frontends} x the per-frontend cap + {@link #UNATTACHED_CONNECTION_ALLOWANCE}.
     */
    public TcpServerLimits resolve(int largestLegalFrame, int frontends) {
        Checks.requireRange("largest legal frame", largestLegalFrame, MIN_FRAME_LENGTH, FrameLayout.MAX_FRAME_LENGTH);
        Builder b = toBuilder();
        if (maxFrameLength == 0) {
            b.maxFrameLength(largestLegalFrame);
        } else if (maxFrameLength < largestLegalFrame) {
            throw new IllegalArgumentException("max frame length " + maxFrameLength + " is below the largest legal "
                    + "request of this backend (" + largestLegalFrame + " bytes: a ring's capacity plus the frame "
                    + "header); frontends could not write their logs");
        }
        if (maxConnections == 0) {
            long derived = (long) frontends * maxConnectionsPerFrontend + UNATTACHED_CONNECTION_ALLOWANCE;
            b.maxConnections((int) Math.min(derived, MAX_CONNECTIONS_LIMIT));
        }
        return b.build();
    }

    /** Whether no value is left to derive. */
    public boolean isResolved() {
        return maxFrameLength > 0 && maxConnections > 0;
    }

    /** Checks every explicit value; derived ones (0) pass. */
    public TcpServerLimits validate() {
        Checks.requireRange("event-loop threads", eventLoopThreads, 1, MAX_THREADS);
        Checks.requireRange("worker threads", workerThreads, 1, MAX_THREADS);
        if (maxFrameLength != 0) {
            Checks.requireRange("max frame length", maxFrameLength, MIN_FRAME_LENGTH, FrameLayout.MAX_FRAME_LENGTH);
        }
        Checks.requireRange("max connections", maxConnections, 0, MAX_CONNECTIONS_LIMIT);
        Checks.requireRange("max connections per frontend", maxConnectionsPerFrontend, 1, 1024);
        Checks.requireRange("idle timeout (ms)", idleTimeoutMillis, 0, MAX_IDLE_TIMEOUT_MILLIS);
        Checks.requireRange("write buffer low water mark", writeBufferLowWaterMark, 1, 1 << 30);
        Checks.requireRange("write buffer high water mark", writeBufferHighWaterMark, writeBufferLowWaterMark,
                1 << 30);
        return this;
    }

    public int eventLoopThreads() {
        return eventLoopThreads;
    }

    public int workerThreads() {
        return workerThreads;
    }

    /** Largest request frame accepted, length field included; 0 = derived. */
    public int maxFrameLength() {
        return maxFrameLength;
    }

    /** Open connections, attached or not; 0 = derived. */
    public int maxConnections() {
        return maxConnections;
    }

    /** Open connections attached to one frontend id (fenced older sessions count until they close). */
    public int maxConnectionsPerFrontend() {
        return maxConnectionsPerFrontend;
    }

    /** A connection with neither reads nor writes for this long, and no operation running, is closed; 0 = never. */
    public long idleTimeoutMillis() {
        return idleTimeoutMillis;
    }

    /** Once unwritable, a connection is read again when its pending replies fall below this many bytes. */
    public int writeBufferLowWaterMark() {
        return writeBufferLowWaterMark;
    }

    /**
     * Pending reply bytes above which a connection is no longer read from (and requests queued behind a slow one
     * beyond this many bytes stop its reads too).
     */
    public int writeBufferHighWaterMark() {
        return writeBufferHighWaterMark;
    }

    @Override
    public String toString() {
        return "TcpServerLimits[eventLoops=" + eventLoopThreads + ", workers=" + workerThreads + ", maxFrame="
                + maxFrameLength + ", maxConnections=" + maxConnections + ", perFrontend="
                + maxConnectionsPerFrontend + ", idleMs=" + idleTimeoutMillis + ", writeBuffer="
                + writeBufferLowWaterMark + "/" + writeBufferHighWaterMark + "]";
    }

    /** Mutable builder; {@link #build()} validates. */
    public static final class Builder {
        private int eventLoopThreads = defaultEventLoopThreads();
        private int workerThreads = DEFAULT_WORKER_THREADS;
        private int maxFrameLength;
        private int maxConnections;
        private int maxConnectionsPerFrontend = DEFAULT_MAX_CONNECTIONS_PER_FRONTEND;
        private long idleTimeoutMillis = DEFAULT_IDLE_TIMEOUT_MILLIS;
        private int writeBufferLowWaterMark = DEFAULT_WRITE_BUFFER_LOW;
        private int writeBufferHighWaterMark = DEFAULT_WRITE_BUFFER_HIGH;

        private Builder() {
        }

        public Builder eventLoopThreads(int v) {
            eventLoopThreads = v;
            return this;
        }

        public Builder workerThreads(int v) {
            workerThreads = v;
            return this;
        }

        /** 0 = the largest legal request of the node. */
        public Builder maxFrameLength(int v) {
            maxFrameLength = v;
            return this;
        }

        /** 0 = derived from the node's frontend count. */
        public Builder maxConnections(int v) {
            maxConnections = v;
            return this;
        }

        public Builder maxConnectionsPerFrontend(int v) {
            maxConnectionsPerFrontend = v;
            return this;
        }

        /** 0 = never close idle connections. */
        public Builder idleTimeoutMillis(long v) {
            idleTimeoutMillis = v;
            return this;
        }

        public Builder writeBufferWaterMarks(int low, int high) {
            writeBufferLowWaterMark = low;
            writeBufferHighWaterMark = high;
            return this;
        }

        public TcpServerLimits build() {
            return new TcpServerLimits(this).validate();
        }
    }
}
