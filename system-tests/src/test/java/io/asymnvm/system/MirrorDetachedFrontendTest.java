package io.asymnvm.system;

import io.asymnvm.backend.BackendConfiguration;
import io.asymnvm.backend.BackendNode;
import io.asymnvm.backend.mirror.MirrorShipper;
import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.layout.ReplicationLayout;
import io.asymnvm.core.layout.SuperblockLayout;
import io.asymnvm.frontend.AsymNvm;
import io.asymnvm.frontend.FrontendOptions;
import io.asymnvm.system.PowerFailureRig.Pending;
import io.asymnvm.system.PowerFailureRig.Transfer;
import io.asymnvm.testsupport.Conditions;
import io.asymnvm.testsupport.ShmTempDirFactory;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A frontend that detaches cleanly from the backend while a SYNC mirror joins. Its clean detach ships its redo and
 * waits until the backend applied every commit, but not until the mirror did: the shipper may still be behind. The
 * mirror has none of those commits' semantic records before the frontend's declared transaction R (they were
 * released once applied on the backend, and reach the mirror as redo only), and none at all when the frontend never
 * added it. The shipper used to stop reporting the frontend as one to wait for as soon as it detached, so the mirror
 * declared itself in sync on its next FRONTENDS report, before the frontend's last redo was shipped: a backend lost
 * then took acknowledged transfers with it (the promoted mirror lacked them).
 *
 * <p>Deterministic: the shipper is held at one of its idle FRONTENDS reports while the frontend commits and
 * detaches, then, released, held again at its first WRITE of the frontend's redo, which comes after its next report.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class MirrorDetachedFrontendTest {
    private static final long SEED = Long.getLong("asymnvm.seed", 20261126L);

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    private BackendConfiguration config(String name) {
        return MirrorJoinFixture.backendConfig(dir, name);
    }

    private FrontendOptions options() {
        return FrontendOptions.builder().credentials(dir.resolve("cluster.credentials")).reconnectTimeoutMillis(300)
                .mirrorReconnectTimeoutMillis(2_000).conclude();
    }

    private AsymNvm connect(BackendNode node) {
        return AsymNvm.connect("tcp", "127.0.0.1:" + node.port(), List.of(), 0, options());
    }

    /** Backend, mirror joined and caught up, frontend 0 committing; the shipper held behind its detach. */
    private final class Rig implements AutoCloseable {
        final BackendConfiguration backendConfig = config("backend.pm");
        final BackendNode backend = BackendNode.start(backendConfig);
        final BackendNode mirror = BackendNode.startMirror(config("mirror.pm"),
                SuperblockLayout.withEpoch(backend.superblock(), backend.replication().epoch()));
        final HeldShipper shipping = new HeldShipper(mirror.localFabric());
        final Pending pending = new Pending(true);
        final Random random = new Random(SEED);
        long appliedAtDetach;

        /**
         * Frontend 0 commits before and while the mirror joins; once the copy is done and the mirror applied what the
         * backend applied, the shipper is held at an idle report; the frontend commits more (after the copy began,
         * applied on the backend, released), adds the mirror when {@code addsTheMirror} and commits a few more
         * (posted to the mirror too), then detaches cleanly. Returns with the shipper held at its first WRITE of the
         * frontend's redo after its next FRONTENDS report.
         */
        void commitAndDetachBehindTheShipper(boolean addsTheMirror) throws InterruptedException {
            AsymNvm nvm = connect(backend);
            boolean closed = false;
            try {
                Accounts accounts = nvm.transactional(Accounts.class, new Accounts.Impl());
                nvm.transactional(Ledger.class, new Ledger.Impl());
                accounts.create(PowerFailureRig.ACCOUNTS, PowerFailureRig.INITIAL);
                transfer(accounts, 100);
                nvm.sync();
                MirrorShipper shipper = backend.replication().addMirror("local:mirror.pm", shipping, false);
                transfer(accounts, 50); // while the copy runs
                nvm.sync();
                Conditions.awaitTrue("the copy is done and the mirror applied what the backend applied", () ->
                        shipper.phase() == MirrorShipper.Phase.STREAMING
                                && mirror.frontendLog(0).checkpoint().appliedTxId()
                                == backend.frontendLog(0).checkpoint().appliedTxId());
                assertEquals(ReplicationLayout.STATE_CATCHING_UP, mirror.replication().state(),
                        "frontend 0 is attached to the backend and has not declared the mirror");

                shipping.holdNextCall = true; // the idle FRONTENDS report (every 20 ms): nothing is shipped meanwhile
                assertTrue(shipping.callHeld.await(60, TimeUnit.SECONDS), "the shipper never reported");
                long mirrorApplied = mirror.frontendLog(0).checkpoint().appliedTxId();
                transfer(accounts, 200);
                nvm.sync(); // applied on the backend and released: the mirror can get these as redo only
                if (addsTheMirror) {
                    nvm.addMirror("127.0.0.1:" + mirror.port()); // declares it SYNC from tx R = all of the above
                    transfer(accounts, 20); // posted to the backend and the mirror
                }
                nvm.close(); // clean: ships the redo, waits until the backend applied it, DETACH
                closed = true;
                appliedAtDetach = backend.frontendLog(0).checkpoint().appliedTxId();
                assertEquals(0, backend.frontendLog(0).attachedEpoch(), "frontend 0 detached");
                assertEquals(mirrorApplied, mirror.frontendLog(0).checkpoint().appliedTxId(), "the shipper is held");
                assertTrue(mirrorApplied < appliedAtDetach, "the mirror applied tx " + mirrorApplied
                        + ", the backend tx " + appliedAtDetach);

                shipping.holdNextRedoWrite = true;
                shipping.releaseCall.countDown(); // its next pass reports the frontends, then ships the redo
                assertTrue(shipping.writeHeld.await(60, TimeUnit.SECONDS), "the shipper never shipped the redo");
            } finally {
                if (!closed) {
                    nvm.crash();
                }
            }
        }

        private void transfer(Accounts accounts, int n) {
            for (int i = 0; i < n; i++) {
                Transfer tr = new Transfer(random.nextInt(PowerFailureRig.ACCOUNTS),
                        random.nextInt(PowerFailureRig.ACCOUNTS), 1 + random.nextInt(1000));
                pending.post(tr);
                accounts.transfer(tr.from(), tr.to(), tr.amount());
                pending.acknowledge(tr);
            }
        }

        /** The backend is lost for good while the shipper is held: nothing more reaches the mirror from it. */
        void loseTheBackend() throws java.io.IOException {
            shipping.severed = true;
            shipping.releaseCall.countDown();
            shipping.releaseWrite.countDown();
            backend.close();
            Files.delete(backendConfig.pmFile());
        }

        /** A new incarnation of frontend 0 recovers on the promoted mirror and reads the balances. */
        long[] balancesOnPromoted() {
            try (AsymNvm again = connect(mirror)) {
                again.transactional(Accounts.class, new Accounts.Impl());
                Ledger ledger = again.transactional(Ledger.class, new Ledger.Impl());
                again.recover();
                return ledger.balances();
            }
        }

        @Override
        public void close() {
            shipping.severed = true; // a failed check must not leave the shipper held or let it copy again
            shipping.releaseCall.countDown();
            shipping.releaseWrite.countDown();
            backend.close();
            mirror.close();
        }
    }

    /**
     * The backend is lost while the detached frontend's last redo is unshipped. The mirror must still be catching up
     * and refuse promotion; before the fix it was in sync, was promoted, and a new incarnation of the frontend found
     * the 200 (or, with the mirror added, the 200 before its declaration) transfers missing.
     */
    @ParameterizedTest(name = "frontend adds the mirror before detaching: {0}")
    @ValueSource(booleans = {false, true})
    void aMirrorIsNotInSyncWhileADetachedFrontendsCommitsAreUnshippedAndRefusesPromotionWhenTheBackendIsLost(
            boolean addsTheMirror) throws Exception {
        try (Rig rig = new Rig()) {
            rig.commitAndDetachBehindTheShipper(addsTheMirror);
            int stateWhileHeld = rig.mirror.replication().state();
            rig.loseTheBackend();
            AsymNvmException refused = assertThrows(AsymNvmException.class, rig.mirror::promote, () -> {
                long[] balances = rig.balancesOnPromoted();
                return "promoted although frontend 0's commits up to tx " + rig.appliedAtDetach + " never reached it"
                        + " (mirror applied tx " + rig.mirror.frontendLog(0).checkpoint().appliedTxId() + "): "
                        + (Arrays.equals(rig.pending.oracle(), balances) ? "all transfers are there anyway"
                        : "a new incarnation sees " + Arrays.toString(balances) + ", not the "
                        + rig.pending.acknowledged() + " acknowledged transfers "
                        + Arrays.toString(rig.pending.oracle()));
            });
            assertEquals(ErrorCode.REPLICA_BEHIND, refused.errorCode(), refused.getMessage());
            assertTrue(refused.getMessage().contains("frontend 0"), refused.getMessage());
            assertEquals(ReplicationLayout.STATE_CATCHING_UP, stateWhileHeld, "in sync while held");
        }
    }

    /**
     * The same, with the shipper released instead: the mirror applies the detached frontend's commits, turns in sync
     * (not before it applied them), and after the loss of the backend the promoted mirror holds every acknowledged
     * transfer.
     */
    @ParameterizedTest(name = "frontend adds the mirror before detaching: {0}")
    @ValueSource(booleans = {false, true})
    void theSameMirrorTurnsInSyncOnceItAppliedTheDetachedFrontendsCommitsAndHoldsEveryTransfer(boolean addsTheMirror)
            throws Exception {
        try (Rig rig = new Rig()) {
            rig.commitAndDetachBehindTheShipper(addsTheMirror);
            assertEquals(ReplicationLayout.STATE_CATCHING_UP, rig.mirror.replication().state(), "in sync while held");
            MirrorShipper shipper = rig.backend.replication().shippers().get(0);
            assertEquals(List.of(0), shipper.detachedAwaitedFrontends(), "status names the frontend waited for");
            rig.shipping.releaseWrite.countDown();
            Conditions.awaitTrue("the mirror is in sync",
                    () -> rig.mirror.replication().state() == ReplicationLayout.STATE_IN_SYNC);
            Conditions.awaitTrue("the applied frontend is no longer listed as waited for",
                    () -> shipper.detachedAwaitedFrontends().isEmpty());
            long applied = rig.mirror.frontendLog(0).checkpoint().appliedTxId();
            assertTrue(applied >= rig.appliedAtDetach, "in sync at applied tx " + applied + " of the "
                    + rig.appliedAtDetach + " the detached frontend committed");
            rig.loseTheBackend();
            rig.mirror.promote();
            long[] balances = rig.balancesOnPromoted();
            assertArrayEquals(rig.pending.oracle(), balances, "the promoted mirror holds "
                    + Arrays.toString(balances) + ", not the " + rig.pending.acknowledged()
                    + " acknowledged transfers " + Arrays.toString(rig.pending.oracle()));
        }
    }

}
