package io.asymnvm.backend;

import io.asymnvm.backend.catalog.CatalogIndex;
import io.asymnvm.backend.control.AttachAuthenticator;
import io.asymnvm.backend.control.BackendControlHandler;
import io.asymnvm.backend.control.NodeCredentials;
import io.asymnvm.core.auth.FrontendCredentials;
import io.asymnvm.backend.image.PmImage;
import io.asymnvm.backend.log.FrontendLog;
import io.asymnvm.backend.mirror.MirrorReplayGate;
import io.asymnvm.backend.mirror.ReplicationService;
import io.asymnvm.core.layout.SlabTableLayout;
import io.asymnvm.backend.replay.ReplayAgent;
import io.asymnvm.backend.slab.SlabTable;
import io.asymnvm.core.fabric.EmulatedNic;
import io.asymnvm.core.fabric.Fabric;
import io.asymnvm.core.fabric.RegionTable;
import io.asymnvm.core.fabric.RemotePersistenceRecipe;
import io.asymnvm.core.fabric.local.LocalFabric;
import io.asymnvm.core.fabric.tcp.TcpNicServer;
import io.asymnvm.core.fabric.tcp.TcpServerLimits;
import io.asymnvm.core.layout.RegionIds;
import io.asymnvm.core.layout.SuperblockLayout.Superblock;
import io.asymnvm.core.region.PersistentRegion;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Path;

/**
 * A memory node: owns the PM image, registers its regions with the emulated NIC, serves the control plane and
 * runs the replayer. Start order is the recovery procedure of DESIGN §4: validate configuration and superblock,
 * probe the port (nothing mapped yet), map, validate each frontend's semantic ring up to its valid tail (a damaged
 * record before the durable watermark quarantines that frontend only), replay every complete redo batch, then serve.
 *
 * <p>Unused in the frontend's process except through {@link io.asymnvm.core.fabric.EmbeddedBackend}.
 */
public final class BackendNode implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(BackendNode.class);
    /**
     * System property: {@code false} registers the rings without a {@link io.asymnvm.core.fabric.WriteDurability},
     * so every ring byte is persisted twice again (by the FLUSH and by the replayer or the watermark check), for
     * comparing a crash exploration or the write amplification with and without persist-once in one build.
     * Default {@code true}.
     */
    public static final String PERSIST_ONCE_PROPERTY = "asymnvm.backend.persistOnce";
    private static final boolean PERSIST_ONCE = !"false".equalsIgnoreCase(System.getProperty(PERSIST_ONCE_PROPERTY));

    private final BackendConfiguration config;
    private final PmImage image;
    private final FrontendLog[] logs;
    private final ReplayAgent replayer;
    private final Thread replayThread;
    private final EmulatedNic nic;
    private final TcpNicServer tcp;
    private final LocalFabric local;
    private final CatalogIndex catalog;
    private final AttachAuthenticator authenticator;
    private final SlabTable slabs;
    private volatile boolean closed;

    // ---- mirrors (issue 9): the node's role and replication (io.asymnvm.backend.mirror) ----
    private final ReplicationService replication;
    private final BackendControlHandler control;

    /** Starts a node in the mirror role; a new image is formatted as {@code formatAs} (the backend's superblock). */
    public static BackendNode startMirror(BackendConfiguration config, Superblock formatAs) {
        return new BackendNode(config, null, true, formatAs);
    }

    /**
     * Starts a node in the mirror role over a caller-provided region (simulated PM in crash tests); a blank region
     * is first formatted as {@code formatAs} (the backend's superblock). The region stays open after close.
     */
    public static BackendNode startMirror(BackendConfiguration config, PersistentRegion region, Superblock formatAs) {
        if (formatAs != null && region.getLong(io.asymnvm.core.layout.SuperblockLayout.MAGIC_OFFSET) == 0) {
            io.asymnvm.core.layout.SuperblockLayout.write(region, formatAs);
        }
        return new BackendNode(config, region, true, null);
    }

    /** The node's role, epoch and replication (mirror side and the backend's shippers). */
    public ReplicationService replication() {
        return replication;
    }

    /** Promotes this mirror to backend (refusals in {@link ReplicationService#promote}); returns the new epoch. */
    public long promote() {
        return control.promote();
    }

    private BackendNode(BackendConfiguration config, PersistentRegion provided) {
        this(config, provided, false, null);
    }

    private BackendNode(BackendConfiguration config, PersistentRegion provided, boolean mirror, Superblock formatAs) {
        this.config = config;
        FrontendCredentials existing = NodeCredentials.loadExisting(config); // a bad file fails before any bind or map
        if (config.port() >= 0) {
            probePort(config.bindHost(), config.port()); // port 0 too: an address that cannot be bound fails here
        }
        this.image = provided == null ? PmImage.open(config, formatAs) : PmImage.over(provided, config);
        ReplayAgent startedAgent = null;
        Thread startedReplayer = null;
        try {
            PersistentRegion region = image.region();
            Superblock sb = image.superblock();
            TcpServerLimits serverLimits = ServerLimits.resolve(config.serverLimits(), sb); // before any replay
            SlabTable slabs = new SlabTable(region, sb, config.slabQuota());
            this.slabs = slabs;
            this.logs = new FrontendLog[sb.maxFrontends()];
            for (int f = 0; f < logs.length; f++) {
                logs[f] = new FrontendLog(f, region, sb);
                FrontendLog.SemanticTail tail = logs[f].scanAtStart(image.previousShutdownClean()); // null: quarantined
                if (tail != null && tail.records() > 0) {
                    LOG.info("frontend {}: {} semantic records after applied tx {} (up to tx {})", f,
                            tail.records(), logs[f].checkpoint().appliedTxId(), tail.lastTxId());
                }
            }
            MirrorReplayGate mirrorGate = mirror ? new MirrorReplayGate(sb, logs, slabs,
                    new io.asymnvm.backend.mirror.MirrorStateStore(region, sb, logs)) : null; // persisted state
            if (mirrorGate != null && mirrorGate.restartedInSync()) {
                LOG.info("mirror restarted in sync (persisted mark): replaying the confirmed redo");
            }
            this.replayer = mirror ? new ReplayAgent(region, sb.heapOffset(), sb.pageSize(), logs, mirrorGate)
                    : new ReplayAgent(region, sb.heapOffset(), sb.pageSize(), logs, slabs);
            replayer.awaitReplayed();
            RegionTable regions = new RegionTable();
            regions.register(RegionIds.HEAP, region, sb.heapOffset(), sb.slabCount() * sb.slabSize(), null);
            regions.register(RegionIds.SLAB_TABLE, region, sb.slabTableOffset(),
                    sb.slabCount() * SlabTableLayout.ENTRY_LENGTH, null); // replication peers only
            for (int f = 0; f < logs.length; f++) {
                regions.register(RegionIds.control(f), region, sb.controlBlockOf(f), sb.pageSize(), null);
                // a backend knows which ring bytes its NIC's FLUSHes persisted (not persisted twice, issue 8
                // goal 7); a mirror's rings are also written by shipping, so it persists everything itself
                boolean once = PERSIST_ONCE && !mirror;
                regions.register(RegionIds.semantic(f), region, sb.semRingOf(f), sb.semRingCapacity(), null,
                        once ? logs[f].semanticWrites() : null);
                regions.register(RegionIds.redo(f), region, sb.redoRingOf(f), sb.redoRingCapacity(),
                        replayer::signal, once ? logs[f].redoWrites() : null);
            }
            RemotePersistenceRecipe recipe = RemotePersistenceRecipe.forDomain(config.persistenceDomain(),
                    config.ddio());
            Path catalogFile = provided == null
                    ? config.pmFile().toAbsolutePath().resolveSibling(config.pmFile().getFileName() + ".catalog")
                    : null;
            // a mirror's heap changes without its catalog: opened (on first use, after promotion) as after a crash
            this.catalog = new CatalogIndex(catalogFile, image.previousShutdownClean() && !mirror, region, sb, slabs,
                    replayer::betweenBatches, config.catalogQuota());
            this.authenticator = NodeCredentials.authenticator(config, existing, sb.maxFrontends());
            this.replication = new ReplicationService(region, sb, logs, slabs, replayer, mirrorGate, authenticator);
            replication.asyncLag(config.asyncLag()); // ASYNC mirrors (issue 9)
            replication.presence().goneMillis(config.frontendGoneMillis()); // a crashed frontend holds mirrors back
            this.control = new BackendControlHandler(sb, logs, slabs, recipe, this::awaitReplayed, catalog,
                    authenticator, replication);
            this.nic = new EmulatedNic(regions, control, config.persistenceDomain());
            this.local = new LocalFabric(nic);
            this.replayThread = new Thread(replayer, "asymnvm-replayer");
            replayThread.setDaemon(true);
            replayThread.start();
            startedAgent = replayer;
            startedReplayer = replayThread;
            this.tcp = config.port() >= 0
                    ? new TcpNicServer(nic, new InetSocketAddress(config.bindHost(), config.port()),
                            serverLimits, config.tls()).start()
                    : null;
        } catch (RuntimeException e) {
            if (startedReplayer != null) {
                startedAgent.stop();
                joinQuietly(startedReplayer);
            }
            image.closeAfterFailedStart();
            throw e;
        }
        LOG.info("backend serving {} ({} free slabs){}", config.pmFile(), image.superblock().slabCount(),
                tcp == null ? "" : " on " + config.bindHost() + ":" + tcp.port());
    }

    /** Starts a node; every configuration and media problem is reported before anything is served. */
    public static BackendNode start(BackendConfiguration config) {
        return new BackendNode(config, null);
    }

    /**
     * Starts a node over a caller-provided region instead of the configured file (simulated PM in crash tests):
     * formatted if blank, recovered otherwise. The region stays open after {@link #close()}.
     */
    public static BackendNode start(BackendConfiguration config, PersistentRegion region) {
        return new BackendNode(config, region);
    }

    private static void joinQuietly(Thread t) {
        try {
            t.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void probePort(String host, int port) {
        try (ServerSocket s = new ServerSocket()) {
            s.setReuseAddress(true);
            s.bind(new InetSocketAddress(InetAddress.getByName(host), port));
        } catch (IOException e) {
            throw new IllegalArgumentException("port " + port + " on " + host + " is not available: "
                    + e.getMessage());
        }
    }

    /** The in-process fabric to this node. */
    public Fabric localFabric() {
        return local;
    }

    /** The node's emulated NIC: what another fabric's responder serves (rdma: {@code FabricProviders.serve}). */
    public EmulatedNic nic() {
        return nic;
    }

    /** The TCP port, or -1 when not listening. */
    public int port() {
        return tcp == null ? -1 : tcp.port();
    }

    public Superblock superblock() {
        return image.superblock();
    }

    public boolean previousShutdownClean() {
        return image.previousShutdownClean();
    }

    public FrontendLog frontendLog(int frontendId) {
        return logs[frontendId];
    }

    public void awaitReplayed() {
        replayer.awaitReplayed();
    }

    /** Runs {@code action} while the replayer applies no batch (tests: a WRITE and its FLUSH before replay). */
    public void betweenBatches(Runnable action) {
        replayer.betweenBatches(action);
    }

    /** The slab owner table (grants, returns, quota). */
    public SlabTable slabs() {
        return slabs;
    }

    /** The catalog of named roots (opened on first use). */
    public CatalogIndex catalog() {
        return catalog;
    }

    /** Control calls refused for authentication since this node started (0 when authentication is off). */
    public long authRefusals() {
        return authenticator.refusals();
    }

    /** The credentials file tcp frontends authenticate with, or null when none is needed. */
    public Path credentialsFile() {
        return config.credentialsFile();
    }

    public BackendConfiguration configuration() {
        return config;
    }

    /** Stops serving, finishes replay of complete batches, unmaps, removes the mark file. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        local.nodeClosed("backend " + config.pmFile() + " closed"); // local peers see CONNECTION_LOST, as tcp ones do
        replication.close();
        if (tcp != null) {
            tcp.close();
        }
        replayer.stop();
        joinQuietly(replayThread);
        replayer.awaitReplayed();
        catalog.close();
        image.close();
        LOG.info("backend {} closed cleanly", config.pmFile());
    }

}
