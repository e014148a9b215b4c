package io.asymnvm.backend;

import io.asymnvm.backend.catalog.CatalogIndex;
import io.asymnvm.core.Checks;
import io.asymnvm.core.fabric.PersistenceDomain;
import io.asymnvm.core.fabric.tcp.TcpServerLimits;
import io.asymnvm.core.layout.LogRecordLayout;
import io.asymnvm.core.region.MappedRegion;

import java.nio.file.Path;
import java.util.Objects;

/**
 * Everything a backend node needs to start, validated completely by {@link #conclude()} before any file is
 * mapped or any port bound. Build with {@link #builder(Path)}.
 */
public final class BackendConfiguration {
    public static final long DEFAULT_SIZE = 256L << 20;
    public static final int DEFAULT_PAGE_SIZE = 4096;
    public static final long DEFAULT_SLAB_SIZE = 1L << 20;
    public static final int DEFAULT_MAX_FRONTENDS = 8;
    public static final long DEFAULT_SEM_RING = 4L << 20;
    public static final long DEFAULT_REDO_RING = 16L << 20;
    public static final int MAX_FRONTENDS_LIMIT = 1024;

    private final Path pmFile;
    private final long size;
    private final String bindHost;
    private final int port;
    private final int pageSize;
    private final long slabSize;
    private final int maxFrontends;
    private final long semRingCapacity;
    private final long redoRingCapacity;
    private final MappedRegion.MapMode mapMode;
    private final PersistenceDomain persistenceDomain;
    private final boolean ddio;
    private final TcpServerLimits serverLimits;
    private final Path credentialsFile;
    private final boolean insecure;
    private final io.asymnvm.core.fabric.tcp.TcpTls tls;
    private final int slabQuota;
    private final int catalogQuota;
    // --- ASYNC mirrors (issue 9) ---
    private final io.asymnvm.backend.mirror.AsyncLagBounds asyncLag;
    // --- a crashed frontend holds a joining mirror back at most this long (FrontendPresence) ---
    private final long frontendGoneMillis;

    private BackendConfiguration(Builder b) {
        this.frontendGoneMillis = b.frontendGoneMillis;
        this.asyncLag = b.asyncLag;
        this.catalogQuota = b.catalogQuota;
        this.tls = b.tls;
        this.credentialsFile = b.credentialsFile;
        this.insecure = b.insecure;
        this.pmFile = b.pmFile;
        this.size = b.size;
        this.bindHost = b.bindHost;
        this.port = b.port;
        this.pageSize = b.pageSize;
        this.slabSize = b.slabSize;
        this.maxFrontends = b.maxFrontends;
        this.semRingCapacity = b.semRingCapacity;
        this.redoRingCapacity = b.redoRingCapacity;
        this.mapMode = b.mapMode;
        this.persistenceDomain = b.persistenceDomain;
        this.ddio = b.ddio;
        this.serverLimits = b.serverLimits;
        this.slabQuota = b.slabQuota;
    }

    public static Builder builder(Path pmFile) {
        return new Builder(pmFile);
    }

    /** The lag bounds of the ASYNC mirrors this node ships to, when it serves as backend. */
    public io.asymnvm.backend.mirror.AsyncLagBounds asyncLag() {
        return asyncLag;
    }

    /**
     * How long a frontend without a session may keep a joining SYNC mirror catching up before the shipper checks
     * that all its commits are applied here and on the mirror and stops waiting for it (see FrontendPresence).
     */
    public long frontendGoneMillis() {
        return frontendGoneMillis;
    }

        public Path pmFile() {
        return pmFile;
    }

    public long size() {
        return size;
    }

    public String bindHost() {
        return bindHost;
    }

    /** TCP port; -1 = no TCP listener (embedded), 0 = any free port. */
    public int port() {
        return port;
    }

    public int pageSize() {
        return pageSize;
    }

    public long slabSize() {
        return slabSize;
    }

    public int maxFrontends() {
        return maxFrontends;
    }

    public long semRingCapacity() {
        return semRingCapacity;
    }

    public long redoRingCapacity() {
        return redoRingCapacity;
    }

    public MappedRegion.MapMode mapMode() {
        return mapMode;
    }

    public PersistenceDomain persistenceDomain() {
        return persistenceDomain;
    }

    public boolean ddio() {
        return ddio;
    }

    /** Limits of the TCP server as configured; frame length and total connections 0 = derived at start. */
    public TcpServerLimits serverLimits() {
        return serverLimits;
    }

    // --- authentication of tcp frontends ---

    /**
     * The file of per-frontend secrets that tcp frontends prove they hold ({@code FILE.credentials} beside the PM
     * file unless set), created with mode 0600 on the first start that serves tcp; null when nothing is
     * authenticated: no tcp listener (the in-process fabric needs none) or {@link #insecure()}.
     */
    public Path credentialsFile() {
        if (port < 0 || insecure) {
            return null;
        }
        return credentialsFile != null ? credentialsFile
                : pmFile.toAbsolutePath().resolveSibling(pmFile.getFileName() + ".credentials");
    }

    /** Authentication turned off explicitly: any peer that reaches the port may attach as any frontend. */
    public boolean insecure() {
        return insecure;
    }

    /** TLS of the tcp listener (server settings), or null for plain tcp. */
    public io.asymnvm.core.fabric.tcp.TcpTls tls() {
        return tls;
    }

    /**
     * The most slabs one frontend may hold ({@code --slab-quota}); 0 = no limit, the default, so that a single
     * frontend can use the whole heap. Set it when several frontends share a backend.
     */
    public int slabQuota() {
        return slabQuota;
    }

    /**
     * The most catalog names (named roots, claims included) one frontend may hold ({@code --catalog-quota}),
     * default {@link CatalogIndex#DEFAULT_QUOTA}; the catalog holds at most {@link CatalogIndex#CAPACITY} in all.
     */
    public int catalogQuota() {
        return catalogQuota;
    }

    /** Mutable builder; {@link #conclude()} validates every value and returns the immutable configuration. */
    public static final class Builder {
        private final Path pmFile;
        private long size = DEFAULT_SIZE;
        private String bindHost = "127.0.0.1";
        private int port = -1;
        private int pageSize = DEFAULT_PAGE_SIZE;
        private long slabSize = DEFAULT_SLAB_SIZE;
        private int maxFrontends = DEFAULT_MAX_FRONTENDS;
        private long semRingCapacity = DEFAULT_SEM_RING;
        private long redoRingCapacity = DEFAULT_REDO_RING;
        private MappedRegion.MapMode mapMode = MappedRegion.MapMode.FILE;
        private PersistenceDomain persistenceDomain = PersistenceDomain.ADR;
        private boolean ddio = true;
        private TcpServerLimits serverLimits = TcpServerLimits.DEFAULTS;
        private Path credentialsFile;
        private boolean insecure;
        private io.asymnvm.core.fabric.tcp.TcpTls tls;
        private int slabQuota;
        private int catalogQuota = CatalogIndex.DEFAULT_QUOTA;
        private io.asymnvm.backend.mirror.AsyncLagBounds asyncLag = io.asymnvm.backend.mirror.AsyncLagBounds.DEFAULTS;
        private long frontendGoneMillis = io.asymnvm.backend.mirror.FrontendPresence.DEFAULT_GONE_MILLIS;

        private Builder(Path pmFile) {
            this.pmFile = Objects.requireNonNull(pmFile, "pmFile");
        }

        public Builder size(long v) {
            size = v;
            return this;
        }

        public Builder bindHost(String v) {
            bindHost = Objects.requireNonNull(v, "bindHost");
            return this;
        }

        public Builder port(int v) {
            port = v;
            return this;
        }

        public Builder pageSize(int v) {
            pageSize = v;
            return this;
        }

        public Builder slabSize(long v) {
            slabSize = v;
            return this;
        }

        public Builder maxFrontends(int v) {
            maxFrontends = v;
            return this;
        }

        public Builder semRingCapacity(long v) {
            semRingCapacity = v;
            return this;
        }

        public Builder redoRingCapacity(long v) {
            redoRingCapacity = v;
            return this;
        }

        public Builder mapMode(MappedRegion.MapMode v) {
            mapMode = Objects.requireNonNull(v, "mapMode");
            return this;
        }

        public Builder persistence(PersistenceDomain domain, boolean ddioOn) {
            persistenceDomain = Objects.requireNonNull(domain, "domain");
            ddio = ddioOn;
            return this;
        }

        /** TCP server limits (see {@link TcpServerLimits} for the defaults). */
        public Builder serverLimits(TcpServerLimits v) {
            serverLimits = Objects.requireNonNull(v, "serverLimits");
            return this;
        }

        /** The credentials file of tcp frontends; default {@code FILE.credentials} beside the PM file. */
        public Builder credentials(Path v) {
            credentialsFile = Objects.requireNonNull(v, "credentials");
            return this;
        }

        /** Turns authentication of tcp frontends off (logged at WARN when the node starts). */
        public Builder insecure(boolean v) {
            insecure = v;
            return this;
        }

        /** TLS on the tcp listener ({@code TcpTls.server(...)}; null: plain tcp). */
        public Builder tls(io.asymnvm.core.fabric.tcp.TcpTls v) {
            tls = v;
            return this;
        }

        /** The most slabs one frontend may hold; 0 = no limit. */
        public Builder slabQuota(int v) {
            slabQuota = v;
            return this;
        }

        /** The most catalog names one frontend may hold, in [1, {@link CatalogIndex#CAPACITY}]. */
        public Builder catalogQuota(int v) {
            catalogQuota = v;
            return this;
        }

        /** See {@link BackendConfiguration#asyncLag()} (validated when the bounds are made). */
        public Builder asyncLag(io.asymnvm.backend.mirror.AsyncLagBounds v) {
            asyncLag = Objects.requireNonNull(v, "asyncLag");
            return this;
        }

        /** See {@link BackendConfiguration#frontendGoneMillis()}; in [1, 86400000]. */
        public Builder frontendGoneMillis(long v) {
            frontendGoneMillis = v;
            return this;
        }

        public BackendConfiguration conclude() {
            if (insecure && credentialsFile != null) {
                throw new IllegalArgumentException("credentials file " + credentialsFile
                        + " given with insecure (authentication off): choose one");
            }
            Checks.requirePowerOfTwo("page size", pageSize);
            Checks.requireRange("page size", pageSize, 512, 1 << 20);
            Checks.requirePositive("PM size", size);
            Checks.requireMultipleOf("PM size", size, pageSize);
            Checks.requirePowerOfTwo("slab size", slabSize);
            Checks.requireRange("slab size", slabSize, pageSize, 1L << 30);
            Checks.requireRange("max frontends", maxFrontends, 1, MAX_FRONTENDS_LIMIT);
            Checks.requireRange("port", port, -1, 65535);
            Checks.requireRange("slab quota per frontend (0 = no limit)", slabQuota, 0, Integer.MAX_VALUE);
            Checks.requireRange("catalog quota per frontend", catalogQuota, 1, CatalogIndex.CAPACITY);
            Checks.requirePositive("semantic ring capacity", semRingCapacity);
            Checks.requireMultipleOf("semantic ring capacity", semRingCapacity, pageSize);
            Checks.requireRange("semantic ring capacity", semRingCapacity, 4L * LogRecordLayout.ALIGNMENT, 1L << 30);
            Checks.requirePositive("redo ring capacity", redoRingCapacity);
            Checks.requireMultipleOf("redo ring capacity", redoRingCapacity, pageSize);
            Checks.requireRange("redo ring capacity", redoRingCapacity, 4L * LogRecordLayout.ALIGNMENT, 1L << 30);
            if (persistenceDomain != PersistenceDomain.ADR && mapMode != MappedRegion.MapMode.DAX) {
                throw new IllegalArgumentException("persistence domain " + persistenceDomain
                        + " needs a DAX-mapped PM file (map mode DAX); with map mode " + mapMode
                        + " data is durable only after msync, so only ADR (flush on commit) is correct");
            }
            io.asymnvm.backend.mirror.FrontendPresence.requireGoneMillis(frontendGoneMillis);
            serverLimits.validate();
            if (serverLimits.maxFrameLength() != 0) { // a new image's geometry; BackendNode checks an existing one
                serverLimits.resolve(ServerLimits.largestLegalFrame(semRingCapacity, redoRingCapacity), maxFrontends);
            }
            return new BackendConfiguration(this);
        }
    }

    @Override
    public String toString() {
        return "BackendConfiguration[pm=" + pmFile + ", size=" + size + ", port=" + port + ", page=" + pageSize
                + ", slab=" + slabSize + ", frontends=" + maxFrontends + ", rings=" + semRingCapacity + "/"
                + redoRingCapacity + ", map=" + mapMode + ", domain=" + persistenceDomain + ", ddio=" + ddio
                + ", " + serverLimits + ", slabQuota=" + slabQuota + ", catalogQuota=" + catalogQuota + "]";
    }
}
