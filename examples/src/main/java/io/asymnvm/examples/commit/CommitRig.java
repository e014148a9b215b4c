package io.asymnvm.examples.commit;

import io.asymnvm.backend.BackendConfiguration;
import io.asymnvm.backend.BackendNode;
import io.asymnvm.core.fabric.FabricConnection;
import io.asymnvm.core.fabric.tcp.TcpFabric;
import io.asymnvm.core.auth.AttachProof;
import io.asymnvm.core.auth.FrontendCredentials;
import io.asymnvm.core.layout.ControlMessageLayout;
import io.asymnvm.core.layout.RegionIds;
import io.asymnvm.examples.support.ScratchDirectory;
import io.asymnvm.frontend.AsymNvm;
import io.asymnvm.frontend.FrontendOptions;
import io.asymnvm.frontend.tx.EngineStats;

import java.nio.file.Path;
import java.util.Objects;

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
 * <p>The frontend runs with default options except the ASYNC flush interval (see
 * {@link #ASYNC_FLUSH_OFF_MICROS}). Single-threaded use; {@link #close()} tears everything down and deletes the
 * scratch directory.
 */
public final class CommitRig implements AutoCloseable {
    public static final int FRONTEND_ID = 0;
    public static final int PROBE_FRONTEND_ID = 1;
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
    private final io.asymnvm.core.fabric.WaitPolicy.Kind waitPolicy;
    /** The raw round trip waits as the frontend does, so the ratio compares like with like. */
    private final io.asymnvm.core.fabric.WaitPolicy probeWait;

    private CommitRig(FabricKind kind, io.asymnvm.core.fabric.WaitPolicy.Kind waitPolicy) {
        this.kind = kind;
        this.waitPolicy = Objects.requireNonNull(waitPolicy, "waitPolicy");
        this.probeWait = io.asymnvm.core.fabric.WaitPolicy.of(waitPolicy);
        this.directory = ScratchDirectory.create("asymnvm-bench-");
    }

    /** Starts a node, a frontend and the probe over {@code kind}; everything started is undone on failure. */
    public static CommitRig start(FabricKind kind) {
        return start(kind, io.asymnvm.core.fabric.WaitPolicy.Kind.ADAPTIVE);
    }

    /** As {@link #start(FabricKind)}, the frontend waiting for its commits as {@code waitPolicy} says. */
    public static CommitRig start(FabricKind kind, io.asymnvm.core.fabric.WaitPolicy.Kind waitPolicy) {
        CommitRig rig = new CommitRig(Objects.requireNonNull(kind, "kind"), waitPolicy);
        try {
            rig.open();
            return rig;
        } catch (RuntimeException e) {
            try {
                rig.close();
            } catch (RuntimeException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
    }

    private void open() {
        node = BackendNode.start(BackendConfiguration.builder(directory.resolve("backend.pm"))
                .port(kind == FabricKind.TCP ? 0 : -1).conclude());
        FrontendOptions options = FrontendOptions.builder().asyncFlushMicros(ASYNC_FLUSH_OFF_MICROS)
                .credentials(node.credentialsFile()).waitPolicy(waitPolicy).conclude();
        if (kind == FabricKind.TCP) {
            nvm = AsymNvm.connect(HOST, node.port(), FRONTEND_ID, options);
            probeFabric = new TcpFabric(HOST, node.port());
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

    public FabricKind kind() {
        return kind;
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
