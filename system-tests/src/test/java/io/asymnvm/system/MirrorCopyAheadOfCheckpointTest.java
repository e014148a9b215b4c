package io.asymnvm.system;

import io.asymnvm.backend.BackendConfiguration;
import io.asymnvm.backend.BackendNode;
import io.asymnvm.backend.mirror.MirrorShipper;
import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.layout.ReplicationLayout;
import io.asymnvm.core.layout.SuperblockLayout;
import io.asymnvm.core.layout.SuperblockLayout.Superblock;
import io.asymnvm.frontend.AsymNvm;
import io.asymnvm.frontend.FrontendOptions;
import io.asymnvm.recovery.crash.SimulatedPmRegion;
import io.asymnvm.recovery.crash.SimulatedPowerFailure;
import io.asymnvm.testsupport.Conditions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The image copy to a joining mirror is fuzzy: it reads the backend's heap while the replayer writes it. A batch
 * the replayer has begun to write into the heap but not yet checkpointed is in the copy, and its redo is shipped
 * only once the checkpoint passes it. The mirror must not call itself in sync before it applied that batch: if the
 * backend is lost in that window (the mirror cannot get the batch's redo any more), a promoted mirror would hold
 * the batch's heap bytes with an applied transaction id below them, and a recovering frontend would re-execute the
 * batch's semantic records (dual-posted to the mirror) over them: a transfer applied twice. This is what
 * {@code MirrorPowerFailureTest#lateJoinOfAMirrorTheFrontendAlreadyUses} found at seed 20261124, crash points 62
 * and 63 (the backend's power cut in the replayer after a batch's heap stores, before its checkpoint, while the
 * shipper copied the heap), once persisting each redo batch once moved a crash point there.
 *
 * <p>Here the backend's replayer is held, deterministically, at its first heap persist after a transfer (the batch's
 * heap stores done, its checkpoint not written) while the mirror joins and its copy completes.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class MirrorCopyAheadOfCheckpointTest {
    private static final int ACCOUNTS = PowerFailureRig.ACCOUNTS;
    private static final long INITIAL = PowerFailureRig.INITIAL;
    private static final int PM_SIZE = MirrorPowerFailureRig.PM_SIZE;

    @TempDir
    Path dir;

    /** The backend's threads that die with its power are expected. */
    @RegisterExtension
    final DyingThreads dyingThreads = new DyingThreads();

    /**
     * A simulated PM region that, once armed, holds the backend's replayer at its first persist of a heap range
     * (after it stored a batch into the heap, before its checkpoint) until released; then it lets the persist
     * through, or cuts the power there.
     */
    private static final class HeldReplayerRegion extends SimulatedPmRegion {
        private final CountDownLatch held = new CountDownLatch(1);
        private final CountDownLatch release = new CountDownLatch(1);
        private volatile long heapFrom = Long.MAX_VALUE;
        private volatile boolean armed;
        private volatile boolean cut;

        HeldReplayerRegion(String name, int size) {
            super(name, size);
        }

        void arm(long heapOffset) {
            heapFrom = heapOffset;
            armed = true;
        }

        @Override
        public void persist(long offset, long length) {
            if (armed && offset >= heapFrom && Thread.currentThread().getName().startsWith("asymnvm-replayer")) {
                armed = false;
                held.countDown();
                try {
                    if (!release.await(60, TimeUnit.SECONDS)) {
                        throw new IllegalStateException("the held replayer was never released");
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException(e);
                }
                if (cut) {
                    synchronized (this) {
                        failAtPersist(persistCount()); // this very persist: the power fails here
                    }
                }
            }
            super.persist(offset, length);
        }
    }

    private static BackendConfiguration config(Path file) {
        return BackendConfiguration.builder(file).size(PM_SIZE).maxFrontends(2).semRingCapacity(PowerFailureRig.RING)
                .redoRingCapacity(PowerFailureRig.RING).slabSize(64 << 10).conclude();
    }

    private static final FrontendOptions OPTIONS = FrontendOptions.builder().reconnectTimeoutMillis(2_000)
            .pollIntervalMicros(100).mirrorReconnectTimeoutMillis(20).conclude();

    /** What a run left: the mirror (live), the balances acknowledged, and whether it claimed in sync. */
    private record Joined(BackendNode backend, HeldReplayerRegion backendRegion, BackendNode mirror,
                          AsymNvm frontend, long[] oracle) {
    }

    /**
     * Backend and mirror; frontend 0 posts to both from its start; accounts created and applied; then the replayer
     * is held after the heap stores of one acknowledged transfer's batch, and the backend starts copying its image to
     * the mirror, which completes (COPY_DONE) while the replayer is still held.
     */
    private Joined joinWhileABatchIsHalfApplied() {
        HeldReplayerRegion backendRegion = new HeldReplayerRegion("backend PM", PM_SIZE);
        SimulatedPmRegion mirrorRegion = new SimulatedPmRegion("mirror PM", PM_SIZE);
        BackendNode backend = BackendNode.start(config(dir.resolve("backend.pm")), backendRegion);
        Superblock sb = SuperblockLayout.withEpoch(backend.superblock(), backend.replication().epoch());
        BackendNode mirror = BackendNode.startMirror(config(dir.resolve("mirror.pm")), mirrorRegion, sb);
        AsymNvm nvm = AsymNvm.open(backend.localFabric(), List.of(mirror.localFabric()), 0, OPTIONS);
        Accounts accounts = nvm.transactional(Accounts.class, new Accounts.Impl());
        nvm.transactional(Ledger.class, new Ledger.Impl());
        accounts.create(ACCOUNTS, INITIAL);
        nvm.sync();
        backend.awaitReplayed();
        long[] oracle = PowerFailureRig.initialBalances();
        PowerFailureRig.Transfer t = new PowerFailureRig.Transfer(1, 2, 77);

        backendRegion.arm(backend.superblock().heapOffset());
        accounts.transfer(t.from(), t.to(), t.amount()); // acknowledged: durable on the backend and the mirror
        t.applyTo(oracle);
        try {
            assertTrue(backendRegion.held.await(60, TimeUnit.SECONDS), "the replayer never reached the transfer");
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
        long applied = backend.frontendLog(0).checkpoint().appliedTxId();
        backend.replication().addMirror("local:mirror", mirror.localFabric());
        MirrorShipper shipper = backend.replication().shippers().get(0);
        Conditions.awaitTrue("the image copy is done", () -> shipper.phase() == MirrorShipper.Phase.STREAMING);
        assertEquals(applied, backend.frontendLog(0).checkpoint().appliedTxId(),
                "the held batch is not checkpointed while the copy ran");
        return new Joined(backend, backendRegion, mirror, nvm, oracle);
    }

    /**
     * The backend is lost while its replayer is held: the mirror has the batch's heap bytes from the copy but can
     * never get its redo, so it must refuse promotion (REPLICA_BEHIND) rather than be promoted and have the
     * transfer re-executed over them. Before the fix the mirror reported in sync here and the new incarnation saw
     * the transfer twice.
     */
    @Test
    void aMirrorWhoseCopyHoldsAnUncheckpointedBatchIsNotInSyncAndRefusesPromotionWhenTheBackendIsLost() {
        Joined j = joinWhileABatchIsHalfApplied();
        try {
            assertEquals(ReplicationLayout.STATE_CATCHING_UP, j.mirror().replication().state(),
                    "in sync with the held batch's heap bytes and no redo for them");
            // the backend's power fails in the held persist; the backend is lost for good
            j.backendRegion().cut = true;
            j.backendRegion().release.countDown();
            Conditions.awaitTrue("the backend lost power", j.backendRegion()::powerLost);
            j.frontend().crash();
            close(j.backend());
            AsymNvmException refused = assertThrows(AsymNvmException.class, j.mirror()::promote,
                    () -> "promoted; a new incarnation would see " + balancesOnPromoted(j.mirror()));
            assertEquals(ErrorCode.REPLICA_BEHIND, refused.errorCode(), refused.getMessage());
        } finally {
            j.backendRegion().release.countDown(); // a failed check must not leave the replayer held
            j.frontend().crash();
            close(j.backend());
            close(j.mirror());
        }
    }

    /**
     * The same, with the replayer released: the batch is checkpointed and shipped, the mirror reaches it and is in
     * sync, and after the loss of the backend the promoted mirror holds the transfer exactly once.
     */
    @Test
    void theSameMirrorIsInSyncOnceTheBatchIsCheckpointedAndShippedAndHoldsTheTransferOnce() {
        Joined j = joinWhileABatchIsHalfApplied();
        try {
            j.backendRegion().release.countDown();
            Conditions.awaitTrue("the mirror is in sync",
                    () -> j.mirror().replication().state() == ReplicationLayout.STATE_IN_SYNC);
            j.frontend().crash();
            j.backend().close();
            j.mirror().promote();
            long[] balances = balancesOnPromoted(j.mirror());
            assertArrayEquals(j.oracle(), balances, "balances on the promoted mirror " + Arrays.toString(balances));
            assertNotEquals(INITIAL, balances[1], "the transfer is there");
        } finally {
            j.backendRegion().release.countDown(); // a failed check must not leave the replayer held
            j.frontend().crash();
            close(j.backend());
            close(j.mirror());
        }
    }

    /** A new incarnation of frontend 0 recovers on the promoted mirror and reads the balances. */
    private static long[] balancesOnPromoted(BackendNode promoted) {
        AsymNvm again = AsymNvm.open(promoted.localFabric(), List.of(), 0, OPTIONS);
        try {
            again.transactional(Accounts.class, new Accounts.Impl());
            Ledger ledger = again.transactional(Ledger.class, new Ledger.Impl());
            again.recover();
            return ledger.balances();
        } finally {
            again.crash();
        }
    }

    private static void close(BackendNode node) {
        try {
            node.close();
        } catch (SimulatedPowerFailure expected) {
            // the node died with the power
        }
    }
}
