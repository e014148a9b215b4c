package io.asymnvm.frontend;

import io.asymnvm.core.Checks;

/**
 * Tuning of a frontend, validated by {@link Builder#conclude()}. Defaults suit a small machine: 64 MiB page
 * cache, redo shipped every 256 transactions, 256 KiB or 1 ms, whichever comes first.
 */
public final class FrontendOptions {
    /** System property that turns {@link Builder#verifyCache(boolean)} on by default ({@code true}/{@code false}). */
    public static final String VERIFY_CACHE_PROPERTY = "asymnvm.verifyCache";

    private final long cacheBytes;
    private final int redoBatchTransactions;
    private final int redoBatchBytes;
    private final long redoMaxDelayMicros;
    private final long pollIntervalMicros;
    private final long asyncFlushMicros;
    private final long reconnectTimeoutMillis;
    private final long embeddedSizeBytes;
    private final int readAheadPages;
    private final boolean verifyCache;
    private final java.nio.file.Path credentials;
    private final io.asymnvm.core.fabric.tcp.TcpTls tls;
    private final boolean returnEmptySlabs;
    private final long keepAliveMillis;
    // --- SYNC mirrors and failover (issue 9) ---
    private final long mirrorReconnectTimeoutMillis;
    private final long failoverTimeoutMillis;
    // --- commit latency: how callers wait (issue 8, goal 5) ---
    private final io.asymnvm.core.fabric.WaitPolicy.Kind waitPolicy;
    private final boolean combineFlushes;
    // --- the naive baseline (issue 8, goal 6) ---
    private final ExecutionMode mode;

    private FrontendOptions(Builder b) {
        mode = b.mode;
        waitPolicy = b.waitPolicy;
        combineFlushes = b.combineFlushes;
        mirrorReconnectTimeoutMillis = b.mirrorReconnectTimeoutMillis;
        failoverTimeoutMillis = b.failoverTimeoutMillis;
        tls = b.tls;
        credentials = b.credentials;
        cacheBytes = b.cacheBytes;
        redoBatchTransactions = b.redoBatchTransactions;
        redoBatchBytes = b.redoBatchBytes;
        redoMaxDelayMicros = b.redoMaxDelayMicros;
        pollIntervalMicros = b.pollIntervalMicros;
        asyncFlushMicros = b.asyncFlushMicros;
        reconnectTimeoutMillis = b.reconnectTimeoutMillis;
        embeddedSizeBytes = b.embeddedSizeBytes;
        readAheadPages = b.readAheadPages;
        verifyCache = b.verifyCache;
        returnEmptySlabs = b.returnEmptySlabs;
        keepAliveMillis = b.keepAliveMillis;
    }

    /**
     * A frontend reads its control block this often, whatever else it does, so the backend's idle timeout
     * (default 300 s) closes only dead connections, not idle frontends (whose reconnect would drop their clean
     * cached pages); 0 = never.
     */
    public long keepAliveMillis() {
        return keepAliveMillis;
    }

    /**
     * How long commits wait for an unreachable SYNC mirror to come back (reconnect, re-post its semantic ring)
     * before they fail with {@code CONNECTION_LOST} naming it; until it is dropped
     * ({@code AsymNvm.dropMirror}), every later commit waits again. Default 30 s.
     */
    public long mirrorReconnectTimeoutMillis() {
        return mirrorReconnectTimeoutMillis;
    }

    /**
     * After the backend stayed unreachable for the reconnect timeout, how long the frontend looks for a SYNC
     * mirror promoted to backend (newer epoch) to resume on, before it gives up with {@code CONNECTION_LOST}.
     * Default 30 s; without mirrors it is unused.
     */
    public long failoverTimeoutMillis() {
        return failoverTimeoutMillis;
    }

    /**
     * How a thread waits for its commit's FLUSH and its page reads ({@link io.asymnvm.core.fabric.WaitPolicy}):
     * SPIN busy-polls (for a caller that owns a core), ADAPTIVE (default) spins about twice the recent round
     * trip (5 to 200 us) then parks, PARK parks at once.
     */
    public io.asymnvm.core.fabric.WaitPolicy.Kind waitPolicy() {
        return waitPolicy;
    }

    /**
     * Group commit: a committer whose record the FLUSH in flight does not cover waits for that FLUSH, then one
     * FLUSH covers every record posted meanwhile (true: about 3x fewer FLUSHes with 8 threads); false posts its own
     * FLUSH at once (pipelined). Default: the system property {@value #COMBINE_FLUSHES_PROPERTY}, else false:
     * on the 2-core machine, where a FLUSH is a cheap msync on tmpfs, the extra wake-up of each combined
     * committer cost more throughput than the saved FLUSHes gained (README, "Commit latency").
     */
    public boolean combineFlushes() {
        return combineFlushes;
    }

    /** The design or the naive baseline ({@link ExecutionMode}); default {@link ExecutionMode#ASYMNVM}. */
    public ExecutionMode mode() {
        return mode;
    }

    /** System property giving the default of {@link Builder#combineFlushes(boolean)} (for benchmarks). */
    public static final String COMBINE_FLUSHES_PROPERTY = "asymnvm.combineFlushes";

    public static FrontendOptions defaults() {
        return builder().conclude();
    }

    public static Builder builder() {
        return new Builder();
    }

    public long cacheBytes() {
        return cacheBytes;
    }

    public int redoBatchTransactions() {
        return redoBatchTransactions;
    }

    public int redoBatchBytes() {
        return redoBatchBytes;
    }

    public long redoMaxDelayMicros() {
        return redoMaxDelayMicros;
    }

    public long pollIntervalMicros() {
        return pollIntervalMicros;
    }

    public long asyncFlushMicros() {
        return asyncFlushMicros;
    }

    public long reconnectTimeoutMillis() {
        return reconnectTimeoutMillis;
    }

    public long embeddedSizeBytes() {
        return embeddedSizeBytes;
    }

    /** Pages fetched per page miss (the missed page and those after it), one round trip. */
    /** Whether fetched and checkpointed pages are compared with the backend image (see the builder). */
    public boolean verifyCache() {
        return verifyCache;
    }

    /** Whether slabs whose blocks are all free go back to the backend (default true). */
    public boolean returnEmptySlabs() {
        return returnEmptySlabs;
    }

    public int readAheadPages() {
        return readAheadPages;
    }

    /** These options with {@code file} as the credentials file (null: none); see {@link Builder#credentials}. */
    public FrontendOptions withCredentials(java.nio.file.Path file) {
        Builder b = builder().cacheBytes(cacheBytes)
                .redoBatch(redoBatchTransactions, redoBatchBytes, redoMaxDelayMicros)
                .pollIntervalMicros(pollIntervalMicros).asyncFlushMicros(asyncFlushMicros)
                .reconnectTimeoutMillis(reconnectTimeoutMillis).embeddedSizeBytes(embeddedSizeBytes)
                .readAheadPages(readAheadPages).verifyCache(verifyCache).tls(tls)
                .returnEmptySlabs(returnEmptySlabs).keepAliveMillis(keepAliveMillis)
                .mirrorReconnectTimeoutMillis(mirrorReconnectTimeoutMillis)
                .failoverTimeoutMillis(failoverTimeoutMillis).waitPolicy(waitPolicy).combineFlushes(combineFlushes).mode(mode);
        return b.credentials(file).conclude();
    }

    /** TLS client settings of {@link AsymNvm#connect}, or null for plain tcp. */
    public io.asymnvm.core.fabric.tcp.TcpTls tls() {
        return tls;
    }

    /** The credentials file a tcp frontend authenticates with (see the builder), or null. */
    public java.nio.file.Path credentials() {
        return credentials;
    }

    /** Mutable builder of {@link FrontendOptions}. */
    public static final class Builder {
        private long cacheBytes = 64L << 20;
        private int redoBatchTransactions = 256;
        private int redoBatchBytes = 256 << 10;
        private long redoMaxDelayMicros = 1000;
        private long pollIntervalMicros = 1000;
        private long asyncFlushMicros = 2000;
        private long reconnectTimeoutMillis = 30_000;
        private long embeddedSizeBytes = 256L << 20;
        private int readAheadPages = 4;
        private boolean verifyCache = Boolean.getBoolean(VERIFY_CACHE_PROPERTY);
        private java.nio.file.Path credentials;
        private io.asymnvm.core.fabric.tcp.TcpTls tls;

        /** TLS to the backend ({@code TcpTls.client(serverCa, certificate, key)}; null: plain tcp). */
        public Builder tls(io.asymnvm.core.fabric.tcp.TcpTls v) {
            tls = v;
            return this;
        }

        private boolean returnEmptySlabs = true;

        private long keepAliveMillis = 60_000;

        /** See {@link FrontendOptions#keepAliveMillis()}; default 60 s, 0 = never. */
        public Builder keepAliveMillis(long v) {
            keepAliveMillis = v;
            return this;
        }

        public Builder cacheBytes(long v) {
            cacheBytes = v;
            return this;
        }

        public Builder redoBatch(int transactions, int bytes, long maxDelayMicros) {
            redoBatchTransactions = transactions;
            redoBatchBytes = bytes;
            redoMaxDelayMicros = maxDelayMicros;
            return this;
        }

        public Builder pollIntervalMicros(long v) {
            pollIntervalMicros = v;
            return this;
        }

        public Builder asyncFlushMicros(long v) {
            asyncFlushMicros = v;
            return this;
        }

        public Builder reconnectTimeoutMillis(long v) {
            reconnectTimeoutMillis = v;
            return this;
        }

        public Builder embeddedSizeBytes(long v) {
            embeddedSizeBytes = v;
            return this;
        }

        public Builder readAheadPages(int v) {
            readAheadPages = v;
            return this;
        }

        /** Return slabs whose blocks are all free to the backend, off the commit path (default true). */
        public Builder returnEmptySlabs(boolean v) {
            returnEmptySlabs = v;
            return this;
        }

        /**
         * Coherence check mode: every page fetch and every applied checkpoint compares the clean cached pages
         * concerned with the backend image, and a mismatch fails with a {@code CacheIncoherentException}. Costs
         * extra reads; meant for tests, drills and CI. Default: the system property
         * {@value FrontendOptions#VERIFY_CACHE_PROPERTY}.
         */
        public Builder verifyCache(boolean v) {
            verifyCache = v;
            return this;
        }

        /**
         * The credentials file holding this frontend's secret (mode 0600): the backend's own file or one exported
         * for this frontend. A tcp frontend proves it holds the secret at every attach and reconnect; the embedded
         * ({@code local}) fabric needs none. Null (the default): attach without a credential, which a backend
         * accepts only when it runs with authentication off.
         */
        public Builder credentials(java.nio.file.Path v) {
            credentials = v;
            return this;
        }

        private long mirrorReconnectTimeoutMillis = 30_000;
        private long failoverTimeoutMillis = 30_000;

        /** See {@link FrontendOptions#mirrorReconnectTimeoutMillis()}. */
        public Builder mirrorReconnectTimeoutMillis(long v) {
            mirrorReconnectTimeoutMillis = v;
            return this;
        }

        /** See {@link FrontendOptions#failoverTimeoutMillis()}. */
        public Builder failoverTimeoutMillis(long v) {
            failoverTimeoutMillis = v;
            return this;
        }

        private io.asymnvm.core.fabric.WaitPolicy.Kind waitPolicy = io.asymnvm.core.fabric.WaitPolicy.Kind.ADAPTIVE;

        /** See {@link FrontendOptions#waitPolicy()}; default ADAPTIVE. */
        public Builder waitPolicy(io.asymnvm.core.fabric.WaitPolicy.Kind v) {
            waitPolicy = v;
            return this;
        }

        private boolean combineFlushes = Boolean.getBoolean(COMBINE_FLUSHES_PROPERTY);

        /** See {@link FrontendOptions#combineFlushes()}. */
        public Builder combineFlushes(boolean v) {
            combineFlushes = v;
            return this;
        }

        private ExecutionMode mode = ExecutionMode.ASYMNVM;

        /** See {@link FrontendOptions#mode()}. */
        public Builder mode(ExecutionMode v) {
            mode = v;
            return this;
        }

        public FrontendOptions conclude() {
            if (mode == null) {
                throw new IllegalArgumentException("execution mode not set: expected one of ASYMNVM, NAIVE");
            }
            if (waitPolicy == null) {
                throw new IllegalArgumentException("wait policy not set: expected one of SPIN, ADAPTIVE, PARK");
            }
            Checks.requireRange("mirror reconnect timeout (ms)", mirrorReconnectTimeoutMillis, 0, 3_600_000);
            Checks.requireRange("failover timeout (ms)", failoverTimeoutMillis, 0, 3_600_000);
            Checks.requireRange("cache bytes", cacheBytes, 1 << 16, 1L << 40);
            Checks.requireRange("redo batch transactions", redoBatchTransactions, 1, 1 << 20);
            Checks.requireRange("redo batch bytes", redoBatchBytes, 4096, 16 << 20);
            Checks.requireRange("redo max delay (us)", redoMaxDelayMicros, 10, 10_000_000);
            Checks.requireRange("poll interval (us)", pollIntervalMicros, 10, 10_000_000);
            Checks.requireRange("async flush interval (us)", asyncFlushMicros, 10, 10_000_000);
            Checks.requireRange("reconnect timeout (ms)", reconnectTimeoutMillis, 0, 3_600_000);
            Checks.requirePositive("embedded PM size", embeddedSizeBytes);
            Checks.requireRange("read-ahead pages", readAheadPages, 0, 256);
            Checks.requireRange("keep-alive (ms)", keepAliveMillis, 0, 3_600_000);
            return new FrontendOptions(this);
        }
    }
}
