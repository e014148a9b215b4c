package io.asymnvm.examples.commit;

import io.asymnvm.backend.BackendConfiguration;
import io.asymnvm.backend.BackendNode;
import io.asymnvm.core.fabric.FabricConnection;
import io.asymnvm.core.fabric.WaitPolicy;
import io.asymnvm.core.fabric.tcp.TcpFabric;
import io.asymnvm.core.auth.AttachProof;
import io.asymnvm.core.auth.FrontendCredentials;
import io.asymnvm.core.layout.ControlMessageLayout;
import io.asymnvm.core.layout.RegionIds;
import io.asymnvm.examples.support.NodeWithFrontend;
import io.asymnvm.examples.support.ScratchDirectory;
import io.asymnvm.frontend.AsymNvm;
import io.asymnvm.frontend.FrontendOptions;
import io.asymnvm.frontend.tx.EngineStats;
import io.asymnvm.mirror.MirrorNode;

import java.nio.file.Path;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * A backend node on a scratch PM file (under {@code /dev/shm} when present), a frontend attached to it as
 * frontend {@value #FRONTEND_ID} with a {@link Register}, and a separate raw fabric connection attached as
 * frontend {@value #PROBE_FRONTEND_ID}, all over one fabric:
 * <ul>
 *   <li>{@code local}: {@code AsymNvm.open(node.localFabric(), ...)} and {@code node.localFabric().connect()};</li>
 *   <li>{@code tcp}: the node listens on a free loopback port; {@code AsymNvm.connect} and a second
 *       {@link TcpFabric}.</li>
 * </ul>
 * {@link #rawRoundTrip()} is the fabric's persisted-write round trip (a 64-byte WRITE into the probe's semantic
 * ring, then an awaited FLUSH), the floor under which no durable commit can go. It writes the semantic ring, as a
 * commit does, not the redo ring: a WRITE into a redo ring also rings the replayer's doorbell (an unpark and a
 * ring scan on the backend), which is neither part of the fabric's round trip nor on the commit path. The probe
 * writes zeros, which no ring scan takes for a record.
 *
 * <p>With one mirror ({@link #start(FabricKind, int)}, issue 9): a mirror node of the backend (over the same
 * fabric kind: {@code MirrorNode.start} from the backend's tcp address, or {@code startLocal}), caught up before the
 * rig is returned, and a second frontend, {@value #REPLICATED_FRONTEND_ID}, with its own register, opened with
 * the mirror as SYNC mirror through {@link CountingFabric}s: its FLUSHes are counted per node. The first
 * frontend stays unreplicated, so one run measures both commits on the same machine state.
 *
 * <p>The frontends run with default options except the ASYNC flush interval (see
 * {@link #ASYNC_FLUSH_OFF_MICROS}). Single-threaded use; {@link #close()} tears everything down and deletes the
 * scratch directory.
 */
public final class CommitRig implements AutoCloseable {
    public static final int FRONTEND_ID = 0;
    public static final int PROBE_FRONTEND_ID = 1;
    /** The frontend whose commits are replicated to the SYNC mirror (with {@code --mirrors 1}). */
    public static final int REPLICATED_FRONTEND_ID = 2;
    /** Mirrors a rig supports: none or one. */
    public static final int MAX_MIRRORS = 1;
    private static final long IN_SYNC_TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(60);
    /** Size of the probe's raw WRITE. */
    public static final int PROBE_WRITE_LENGTH = 64;
    private static final String HOST = "127.0.0.1";
    /**
     * The longest ASYNC flush interval the options allow. Only SYNC transactions run here and their callers
     * flush for themselves; the agent's periodic flush for ASYNC ones would only race them (a commit whose record
     * the agent made durable first waits for no round trip, which blurs round trips per commit).
     */
    static final long ASYNC_FLUSH_OFF_MICROS = 10_000_000;

    private final FabricKind kind;
    private final Path directory;
    private final byte[] probeBytes = new byte[PROBE_WRITE_LENGTH];
    private BackendNode node;
    private TcpFabric probeFabric;
    private FabricConnection probe;
    private AsymNvm nvm;
    private Register register;
    // ---- with one SYNC mirror ----
    private final int mirrors;
    private MirrorNode mirror;
    private CountingFabric replicatedBackend;
    private CountingFabric replicatedMirror;
    private AsymNvm replicatedNvm;
    private Register replicatedRegister;

    // ---- waiting policy (issue 8, goal 5) ----
    private final WaitPolicy.Kind waitPolicy;
    /** The raw round trip waits as the frontends do, so the ratio compares like with like. */
    private final WaitPolicy probeWait;

    private CommitRig(FabricKind kind, int mirrors, WaitPolicy.Kind waitPolicy) {
        this.kind = kind;
        this.mirrors = mirrors;
        this.waitPolicy = Objects.requireNonNull(waitPolicy, "waitPolicy");
        this.probeWait = WaitPolicy.of(waitPolicy);
        this.directory = ScratchDirectory.create("asymnvm-bench-");
    }

    /** Starts a node, a frontend and the probe over {@code kind}; everything started is undone on failure. */
    public static CommitRig start(FabricKind kind) {
        return start(kind, 0);
    }

    /**
     * As {@link #start(FabricKind)}, plus {@code mirrors} (0 or 1) SYNC mirror and the replicated frontend; every
     * value is checked before anything is created.
     */
    public static CommitRig start(FabricKind kind, int mirrors) {
        return start(kind, mirrors, WaitPolicy.Kind.ADAPTIVE);
    }

    /**
     * As {@link #start(FabricKind, int)}, every frontend (and the raw round trip) waiting for its FLUSHes as
     * {@code waitPolicy} says.
     */
    public static CommitRig start(FabricKind kind, int mirrors, WaitPolicy.Kind waitPolicy) {
        if (mirrors < 0 || mirrors > MAX_MIRRORS) {
            throw new IllegalArgumentException("mirrors " + mirrors + " is outside [0, " + MAX_MIRRORS
                    + "]: the commit bench runs without a mirror or with one SYNC mirror");
        }
        CommitRig rig = new CommitRig(Objects.requireNonNull(kind, "kind"), mirrors, waitPolicy);
        try {
            rig.open();
            if (mirrors > 0) {
                rig.openMirror();
            }
            return rig;
        } catch (RuntimeException e) {
            NodeWithFrontend.closeAfterFailure(rig, e);
            throw e;
        }
    }

    private void open() {
        node = BackendNode.start(BackendConfiguration.builder(directory.resolve("backend.pm"))
                .port(kind.backendPort()).conclude());
        FrontendOptions options = FrontendOptions.builder().asyncFlushMicros(ASYNC_FLUSH_OFF_MICROS)
                .credentials(node.credentialsFile()).waitPolicy(waitPolicy).conclude();
        if (kind == FabricKind.TCP) {
            nvm = AsymNvm.connect(HOST, node.port(), FRONTEND_ID, options);
            probeFabric = new TcpFabric(HOST, node.port(), null, waitPolicy == WaitPolicy.Kind.SPIN);
            probe = probeFabric.connect();
        } else {
            nvm = AsymNvm.open(node.localFabric(), FRONTEND_ID, options);
            probe = node.localFabric().connect();
        }
        probe.call(node.credentialsFile() == null
                ? ControlMessageLayout.request(ControlMessageLayout.KIND_ATTACH, PROBE_FRONTEND_ID, 0)
                : AttachProof.attachRequest(probe, FrontendCredentials.load(node.credentialsFile())
                        .secret(PROBE_FRONTEND_ID), PROBE_FRONTEND_ID, 0, null)).await();
        register = nvm.transactional(Register.class, new Register.Impl());
        register.create();
    }

    /**
     * Starts the mirror, waits until it is in sync (the copy of the image and the registers' creation replayed),
     * then opens the replicated frontend over counting fabrics and creates its register.
     */
    private void openMirror() {
        BackendConfiguration.Builder mc = BackendConfiguration.builder(directory.resolve("mirror.pm"))
                .port(kind.backendPort());
        if (node.credentialsFile() != null) {
            mc.credentials(node.credentialsFile());
        }
        mirror = kind == FabricKind.TCP ? MirrorNode.start(mc.conclude(), HOST, node.port())
                : MirrorNode.startLocal(mc.conclude(), node);
        long deadline = System.nanoTime() + IN_SYNC_TIMEOUT_NANOS;
        // caught up, not in sync: the unreplicated frontend is attached to the backend and never declares the
        // mirror SYNC, so the mirror stays catching up by design (issue 9); what matters here is that its image
        // copy is done and it applied what the backend applied, so the measured commits do not race the copy
        while (!caughtUp()) {
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("the mirror did not catch up within "
                        + TimeUnit.NANOSECONDS.toSeconds(IN_SYNC_TIMEOUT_NANOS) + " s (state " + mirror.state() + ")");
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
        }
        FrontendOptions options = FrontendOptions.builder().asyncFlushMicros(ASYNC_FLUSH_OFF_MICROS)
                .credentials(node.credentialsFile()).waitPolicy(waitPolicy).conclude();
        replicatedBackend = new CountingFabric(kind == FabricKind.TCP ? new TcpFabric(HOST, node.port())
                : node.localFabric());
        replicatedMirror = new CountingFabric(kind == FabricKind.TCP ? new TcpFabric(HOST, mirror.port())
                : mirror.localFabric());
        replicatedNvm = AsymNvm.open(replicatedBackend, List.of(replicatedMirror), REPLICATED_FRONTEND_ID, options);
        replicatedRegister = replicatedNvm.transactional(Register.class, new Register.Impl());
        replicatedRegister.create();
    }

    private boolean caughtUp() {
        List<io.asymnvm.backend.mirror.MirrorShipper> shippers = node.replication().shippers();
        return !shippers.isEmpty() && shippers.get(0).phase() == io.asymnvm.backend.mirror.MirrorShipper.Phase.STREAMING
                && shippers.get(0).lagTransactions(FRONTEND_ID) == 0
                && mirror.node().frontendLog(FRONTEND_ID).checkpoint().appliedTxId()
                == node.frontendLog(FRONTEND_ID).checkpoint().appliedTxId();
    }

    public FabricKind kind() {
        return kind;
    }

    /** How the frontends and the raw round trip wait. */
    public WaitPolicy.Kind waitPolicy() {
        return waitPolicy;
    }

    /** SYNC mirrors of the replicated frontend (0 or 1). */
    public int mirrors() {
        return mirrors;
    }

    /** One single-thread SYNC transaction of the replicated frontend: durable on the backend and the mirror. */
    public void commitReplicated(long value) {
        replicatedRegister.set(value);
    }

    /** The replicated frontend's engine counters. */
    public EngineStats replicatedStats() {
        return replicatedNvm.stats();
    }

    /** FLUSHes the replicated frontend posted to the backend, over all its connections. */
    public long replicatedBackendFlushes() {
        return replicatedBackend.flushes();
    }

    /** FLUSHes the replicated frontend posted to the mirror, over all its connections. */
    public long replicatedMirrorFlushes() {
        return replicatedMirror.flushes();
    }

    /** One single-thread SYNC transaction writing one long; returns once it is durable. */
    public void commit(long value) {
        register.set(value);
    }

    /** The raw persisted-write round trip: WRITE 64 bytes, FLUSH, await the FLUSH. */
    public void rawRoundTrip() {
        probe.write(RegionIds.semantic(PROBE_FRONTEND_ID), 0, probeBytes, 0, PROBE_WRITE_LENGTH);
        probe.flush(0, false).await(probeWait);
    }

    /** Times the raw round trip's waiter parked its thread: 0 with {@link WaitPolicy.Kind#SPIN}. */
    public long probeParks() {
        return probe.counters().parks();
    }

    /** The tcp transport that runs ({@code epoll} or {@code nio}), or {@code local}. */
    public String transport() {
        return probeFabric == null ? "local" : probeFabric.transport();
    }

    public EngineStats stats() {
        return nvm.stats();
    }

    public Register register() {
        return register;
    }

    @Override
    public void close() {
        RuntimeException failure = null;
        try {
            if (probe != null) {
                probe.call(ControlMessageLayout.request(ControlMessageLayout.KIND_DETACH, PROBE_FRONTEND_ID, 0))
                        .await();
            }
        } catch (RuntimeException e) {
            failure = e;
        }
        failure = run(failure, probe == null ? null : probe::close);
        failure = run(failure, probeFabric == null ? null : probeFabric::close);
        failure = run(failure, nvm == null ? null : nvm::close);
        failure = run(failure, replicatedNvm == null ? null : replicatedNvm::close);
        failure = run(failure, replicatedBackend == null || kind != FabricKind.TCP ? null : replicatedBackend::close);
        failure = run(failure, replicatedMirror == null || kind != FabricKind.TCP ? null : replicatedMirror::close);
        failure = run(failure, mirror == null ? null : mirror::close);
        failure = run(failure, node == null ? null : node::close);
        failure = run(failure, () -> ScratchDirectory.delete(directory));
        if (failure != null) {
            throw failure;
        }
    }

    private static RuntimeException run(RuntimeException failure, Runnable step) {
        if (step == null) {
            return failure;
        }
        try {
            step.run();
        } catch (RuntimeException e) {
            if (failure == null) {
                return e;
            }
            failure.addSuppressed(e);
        }
        return failure;
    }
}
