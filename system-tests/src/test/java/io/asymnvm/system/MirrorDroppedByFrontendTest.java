package io.asymnvm.system;

import io.asymnvm.backend.BackendConfiguration;
import io.asymnvm.backend.BackendNode;
import io.asymnvm.backend.mirror.MirrorShipper;
import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.fabric.tcp.TcpFabric;
import io.asymnvm.core.layout.ReplicationLayout;
import io.asymnvm.core.layout.SuperblockLayout;
import io.asymnvm.frontend.AsymNvm;
import io.asymnvm.frontend.FrontendOptions;
import io.asymnvm.system.PowerFailureRig.Pending;
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

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A frontend drops a SYNC mirror that is in sync (its link broke: {@link AsymNvm#dropMirror}, as an operator or the
 * cluster follower does) and goes on committing without it. Those commits are acknowledged on the backend alone: the
 * mirror has neither their semantic records (the frontend no longer posts to it) nor, until the backend's shipper
 * brings their redo, their effects. The frontend's declaration of the mirror (MIRROR_POSTING under its backend attach
 * epoch) must then no longer count: a backend lost before that redo reached the mirror must find the mirror refusing
 * promotion, never promoted without acknowledged transfers.
 *
 * <p>Deterministic, two ways of keeping the redo from the mirror: held in the frontend (a redo batch bound it never
 * reaches; the frontend then crashes with it), or applied on the backend and the shipper held at its WRITE of it.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class MirrorDroppedByFrontendTest {
    private static final long SEED = Long.getLong("asymnvm.seed", 20261128L);

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    private BackendConfiguration config(String name) {
        return MirrorJoinFixture.backendConfig(dir, name);
    }

    /** Redo stays in the frontend until {@link AsymNvm#sync} (a batch bound no test reaches). */
    private FrontendOptions heldRedo() {
        return FrontendOptions.builder().credentials(dir.resolve("cluster.credentials")).reconnectTimeoutMillis(300)
                .mirrorReconnectTimeoutMillis(300).redoBatch(1 << 20, 16 << 20, 10_000_000).conclude();
    }

    private AsymNvm connect(BackendNode node, FrontendOptions options) {
        return AsymNvm.connect("tcp", "127.0.0.1:" + node.port(), List.of(), 0, options);
    }

    /**
     * The backend is lost after the frontend dropped the in-sync mirror and committed more transfers, whose redo
     * the mirror never got ({@code redoOnBackend}: applied on the backend, the shipper held at its WRITE; else held
     * in the frontend, which crashes). The mirror must refuse promotion with {@code REPLICA_BEHIND} naming the
     * frontend; before the fix it stayed in sync and was promoted without those transfers.
     */
    @ParameterizedTest(name = "redo applied on the backend, shipper held: {0}")
    @ValueSource(booleans = {false, true})
    void aMirrorTheFrontendDroppedIsNotPromotedWithoutTheCommitsAcknowledgedAfterTheDrop(boolean redoOnBackend)
            throws Exception {
        BackendConfiguration backendConfig = config("backend.pm");
        BackendNode backend = BackendNode.start(backendConfig);
        boolean backendLost = false;
        try (BackendNode mirror = BackendNode.startMirror(config("mirror.pm"),
                     SuperblockLayout.withEpoch(backend.superblock(), backend.replication().epoch()));
             SeverableFabric link = new SeverableFabric(new TcpFabric("127.0.0.1", mirror.port(), null),
                     "the link to the mirror broke")) {
            HeldShipper shipping = new HeldShipper(mirror.localFabric());
            MirrorShipper shipper = backend.replication().addMirror("local:mirror.pm", shipping, false);
            Pending pending = new Pending(true);
            Random random = new Random(SEED);
            String m = "127.0.0.1:" + mirror.port();
            AsymNvm nvm = connect(backend, heldRedo());
            boolean crashed = false;
            long lastTx;
            try {
                Accounts accounts = nvm.transactional(Accounts.class, new Accounts.Impl());
                nvm.transactional(Ledger.class, new Ledger.Impl());
                accounts.create(PowerFailureRig.ACCOUNTS, PowerFailureRig.INITIAL);
                Conditions.awaitTrue("the image copy is done", () -> shipper.phase() == MirrorShipper.Phase.STREAMING);
                nvm.addMirror(link, m);
                transfer(accounts, pending, random, 100);
                nvm.sync();
                Conditions.awaitTrue("the mirror is in sync and applied every transfer so far", () ->
                        mirror.replication().state() == ReplicationLayout.STATE_IN_SYNC
                                && mirror.frontendLog(0).checkpoint().appliedTxId()
                                == backend.frontendLog(0).checkpoint().appliedTxId());
                long mirrorApplied = mirror.frontendLog(0).checkpoint().appliedTxId();

                link.severed = true; // the frontend's link to the mirror fails; the backend's shipper still reaches it
                nvm.dropMirror(m);
                assertEquals(List.of(), nvm.mirrors(), "dropped");
                if (redoOnBackend) {
                    shipping.holdNextRedoWrite = true;
                }
                transfer(accounts, pending, random, 150); // acknowledged by the backend alone
                lastTx = nvm.stats().lastTxId();
                if (redoOnBackend) {
                    nvm.sync(); // applied on the backend; the shipper is held at its WRITE of this redo
                    assertTrue(shipping.writeHeld.await(60, TimeUnit.SECONDS), "the shipper never shipped the redo");
                }
                nvm.crash(); // with redoOnBackend false, the redo of the last 150 transfers is lost with it
                crashed = true;
                assertEquals(mirrorApplied, mirror.frontendLog(0).checkpoint().appliedTxId(),
                        "the mirror got none of the transfers after the drop");
                assertTrue(mirrorApplied < lastTx, "the mirror applied tx " + mirrorApplied + " of " + lastTx);
            } finally {
                if (!crashed) {
                    nvm.crash();
                }
            }

            // the backend is lost for good: nothing more reaches the mirror from it
            shipping.severed = true;
            shipping.releaseWrite.countDown();
            backend.close();
            backendLost = true;
            Files.delete(backendConfig.pmFile());

            AsymNvmException refused = assertThrows(AsymNvmException.class, mirror::promote, () -> {
                String seen;
                try {
                    long[] balances = balancesOn(mirror);
                    seen = Arrays.equals(pending.oracle(), balances) ? "all transfers are there anyway"
                            : "a new incarnation sees " + Arrays.toString(balances) + ", not the "
                            + pending.acknowledged() + " acknowledged transfers " + Arrays.toString(pending.oracle());
                } catch (RuntimeException e) {
                    seen = "a new incarnation could not recover there: " + e;
                }
                return "promoted although frontend 0 committed up to tx " + lastTx + " after it dropped the mirror, "
                        + "which applied tx " + mirror.frontendLog(0).checkpoint().appliedTxId() + ": " + seen;
            });
            assertEquals(ErrorCode.REPLICA_BEHIND, refused.errorCode(), refused.getMessage());
            assertTrue(refused.getMessage().contains("frontend 0"), refused.getMessage());
        } finally {
            if (!backendLost) {
                backend.close();
            }
        }
    }

    /**
     * The dropped mirror is not stuck: once the frontend's link to it works again and the frontend adds it back
     * (re-posting its retained records and declaring it under its raised posting generation), it turns in sync
     * again, and promoted after the loss of the backend it holds every acknowledged transfer, also those committed
     * while it was dropped (their redo still in the frontend when it crashed).
     */
    @org.junit.jupiter.api.Test
    void aDroppedMirrorAddedBackIsInSyncAgainAndHoldsEveryTransferAfterTheBackendsLoss() throws Exception {
        BackendConfiguration backendConfig = config("backend.pm");
        BackendNode backend = BackendNode.start(backendConfig);
        boolean backendLost = false;
        try (BackendNode mirror = BackendNode.startMirror(config("mirror.pm"),
                     SuperblockLayout.withEpoch(backend.superblock(), backend.replication().epoch()));
             SeverableFabric link = new SeverableFabric(new TcpFabric("127.0.0.1", mirror.port(), null),
                     "the link to the mirror broke")) {
            MirrorShipper shipper = backend.replication().addMirror("local:mirror.pm", mirror.localFabric(), false);
            Pending pending = new Pending(true);
            Random random = new Random(SEED);
            String m = "127.0.0.1:" + mirror.port();
            AsymNvm nvm = connect(backend, heldRedo());
            try {
                Accounts accounts = nvm.transactional(Accounts.class, new Accounts.Impl());
                nvm.transactional(Ledger.class, new Ledger.Impl());
                accounts.create(PowerFailureRig.ACCOUNTS, PowerFailureRig.INITIAL);
                Conditions.awaitTrue("the image copy is done", () -> shipper.phase() == MirrorShipper.Phase.STREAMING);
                nvm.addMirror(link, m);
                transfer(accounts, pending, random, 100);
                nvm.sync();
                Conditions.awaitTrue("the mirror is in sync", () -> mirror.replication().state()
                        == ReplicationLayout.STATE_IN_SYNC);

                link.severed = true;
                nvm.dropMirror(m);
                assertEquals(ReplicationLayout.STATE_CATCHING_UP, mirror.replication().state(),
                        "the mirror is told before the drop returns");
                transfer(accounts, pending, random, 150);
                link.severed = false;
                nvm.addMirror(link, m); // re-posts the retained records, declares it again
                transfer(accounts, pending, random, 20);
                Conditions.awaitTrue("the mirror is in sync again", () -> mirror.replication().state()
                        == ReplicationLayout.STATE_IN_SYNC);
            } finally {
                nvm.crash(); // the redo of the last 170 transfers is lost with it
            }
            backend.close();
            backendLost = true;
            Files.delete(backendConfig.pmFile());
            mirror.promote();
            long[] balances = balancesOn(mirror);
            org.junit.jupiter.api.Assertions.assertArrayEquals(pending.oracle(), balances, "the promoted mirror "
                    + "holds " + Arrays.toString(balances) + ", not the " + pending.acknowledged()
                    + " acknowledged transfers " + Arrays.toString(pending.oracle()));
        } finally {
            if (!backendLost) {
                backend.close();
            }
        }
    }

    private static void transfer(Accounts accounts, Pending pending, Random random, int n) {
        MirrorJoinFixture.transfer(accounts, pending, random, n);
    }

    /** A new incarnation of frontend 0 recovers on the promoted {@code node} and reads the balances. */
    private long[] balancesOn(BackendNode node) {
        try (AsymNvm again = connect(node, FrontendOptions.builder().credentials(dir.resolve("cluster.credentials"))
                .reconnectTimeoutMillis(300).conclude())) {
            again.transactional(Accounts.class, new Accounts.Impl());
            Ledger ledger = again.transactional(Ledger.class, new Ledger.Impl());
            again.recover();
            return ledger.balances();
        }
    }
}
