package io.asymnvm.system;

import io.asymnvm.backend.BackendConfiguration;
import io.asymnvm.backend.BackendNode;
import io.asymnvm.backend.mirror.MirrorShipper;
import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.fabric.Completion;
import io.asymnvm.core.fabric.Fabric;
import io.asymnvm.core.fabric.FabricConnection;
import io.asymnvm.core.fabric.ForwardingConnection;
import io.asymnvm.core.fabric.ForwardingFabric;
import io.asymnvm.core.fabric.tcp.TcpFabric;
import io.asymnvm.core.layout.RegionIds;
import io.asymnvm.core.layout.ReplicationLayout;
import io.asymnvm.frontend.AsymNvm;
import io.asymnvm.frontend.FrontendOptions;
import io.asymnvm.mirror.MirrorNode;
import io.asymnvm.system.PowerFailureRig.Pending;
import io.asymnvm.system.PowerFailureRig.Transfer;
import io.asymnvm.testsupport.ShmTempDirFactory;
import io.asymnvm.testsupport.Conditions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A mirror that joins while frontends run (issue 9): a frontend adds it at run time ({@link AsymNvm#addMirror}),
 * re-posting its retained semantic records and dual-posting from then on, and declares it SYNC; the mirror reports
 * in sync only once every frontend attached to its backend did so (the bank oracle of acknowledged transfers then
 * survives the permanent loss of the backend), and refuses promotion with {@code REPLICA_BEHIND} naming a frontend
 * that did not.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class MirrorLateJoinTest {
    private static final long SEED = Long.getLong("asymnvm.seed", 20261125L);
    private static final java.time.Duration WAIT = java.time.Duration.ofSeconds(60);

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    private BackendConfiguration config(String name) {
        return MirrorJoinFixture.backendConfig(dir, name);
    }

    private FrontendOptions options() {
        return FrontendOptions.builder().credentials(dir.resolve("cluster.credentials")).reconnectTimeoutMillis(300)
                .failoverTimeoutMillis(20_000).mirrorReconnectTimeoutMillis(2_000).conclude();
    }

    /** Frontend {@code id} over tcp to {@code node}, without mirrors. */
    private AsymNvm connect(BackendNode node, int id) {
        return AsymNvm.connect("tcp", "127.0.0.1:" + node.port(), List.of(), id, options());
    }

    /** One thread of seeded SYNC transfers until stopped, each posted to and acknowledged in {@code pending}. */
    private static Thread transfers(Accounts accounts, Pending pending, AtomicBoolean stop,
                                    AtomicReference<Throwable> failure, long seed) {
        Thread t = new Thread(() -> {
            Random random = new Random(seed);
            try {
                for (int i = 0; i < 1_000_000 && !stop.get(); i++) {
                    Transfer tr = new Transfer(random.nextInt(PowerFailureRig.ACCOUNTS),
                            random.nextInt(PowerFailureRig.ACCOUNTS), 1 + random.nextInt(1000));
                    pending.post(tr);
                    accounts.transfer(tr.from(), tr.to(), tr.amount());
                    pending.acknowledge(tr);
                }
            } catch (Throwable e) {
                failure.set(e);
            }
        }, "bank-transfers");
        t.start();
        return t;
    }

    @Test
    void mirrorAddedWhileTransfersRunHoldsEveryAcknowledgedTransferAfterThePermanentLossOfTheBackend()
            throws Exception {
        BackendConfiguration backendConfig = config("backend.pm");
        BackendNode backend = BackendNode.start(backendConfig);
        Pending pending = new Pending(true);
        AtomicBoolean stop = new AtomicBoolean();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        // The frontend attaches before the mirror joins: a mirror whose copy ends before a frontend attaches (the
        // shipper's FRONTENDS report did not list it yet) is in sync without it, the documented window ("Limits of
        // mirrors today"); attaching after the mirror raced the copy and failed the first assertion under load.
        AsymNvm attachedFirst = connect(backend, 0);
        try (MirrorNode mirror = startMirrorThatTheFrontendDoesNotKnow(backend);
             AsymNvm nvm = attachedFirst) {
            Accounts accounts = nvm.transactional(Accounts.class, new Accounts.Impl());
            Ledger ledger = nvm.transactional(Ledger.class, new Ledger.Impl());
            accounts.create(PowerFailureRig.ACCOUNTS, PowerFailureRig.INITIAL);
            nvm.sync();
            Thread worker = transfers(accounts, pending, stop, failure, SEED);
            Conditions.awaitTrue("transfers before the mirror is added",
                    () -> pending.acknowledged() > 300 || failure.get() != null);
            assertEquals(ReplicationLayout.STATE_CATCHING_UP, mirror.state(),
                    "frontend 0 is attached to the backend and has not declared the mirror");

            String m1 = "127.0.0.1:" + mirror.port();
            nvm.addMirror(m1); // while the worker commits
            assertEquals(List.of(m1), nvm.mirrors());
            Conditions.awaitTrue("the mirror is in sync", () -> mirror.inSync() || failure.get() != null);
            int atSync = pending.acknowledged();
            Conditions.awaitTrue("transfers after the sync",
                    () -> pending.acknowledged() > atSync + 300 || failure.get() != null);
            assertNull(failure.get(), () -> "transfers failed: " + failure.get());

            // the backend is lost for good, mid-stream: its redo not yet shipped exists only as semantic records
            backend.close();
            Files.delete(backendConfig.pmFile());
            long promotedEpoch = mirror.promote();
            int atLoss = pending.acknowledged();
            Conditions.awaitTrue("transfers on the promoted mirror", () -> pending.acknowledged() > atLoss + 200
                    || failure.get() != null);
            stop.set(true);
            worker.join(30_000);
            assertNull(failure.get(), () -> "transfers failed across the failover: " + failure.get());
            assertEquals(1, nvm.stats().failovers(), "the frontend resumed on the promoted mirror");
            assertTrue(Arrays.equals(pending.oracle(), ledger.balances()), "balances on the promoted mirror "
                    + Arrays.toString(ledger.balances()) + " differ from the oracle of " + pending.acknowledged()
                    + " acknowledged transfers " + Arrays.toString(pending.oracle()));
            nvm.crash(); // a new incarnation, without this one's cache, must find the same
            try (AsymNvm again = connect(mirror.node(), 0)) {
                again.transactional(Accounts.class, new Accounts.Impl());
                Ledger fresh = again.transactional(Ledger.class, new Ledger.Impl());
                again.recover();
                assertTrue(Arrays.equals(pending.oracle(), fresh.balances()), "a new incarnation on the mirror of "
                        + "epoch " + promotedEpoch + " sees " + Arrays.toString(fresh.balances()) + ", not "
                        + Arrays.toString(pending.oracle()));
            }
            System.out.printf("late join: %d acknowledged transfers, mirror added after %d, in sync after %d, "
                    + "backend lost after %d, promoted epoch %d%n", pending.acknowledged(), 300, atSync, atLoss,
                    promotedEpoch);
        } finally {
            stop.set(true);
            backend.close();
        }
    }

    @Test
    void aFrontendThatNeverAddsTheMirrorKeepsItCatchingUpAndPromotionRefusedNamingIt() {
        try (BackendNode backend = BackendNode.start(config("backend.pm"))) {
            AsymNvm a = connect(backend, 0);
            AsymNvm b = connect(backend, 1);
            Accounts accountsA = a.transactional(Accounts.class, new Accounts.Impl());
            Accounts accountsB = b.transactional(Accounts.class, new Accounts.Impl());
            accountsA.create(PowerFailureRig.ACCOUNTS, PowerFailureRig.INITIAL);
            accountsB.create(PowerFailureRig.ACCOUNTS, PowerFailureRig.INITIAL);
            boolean closed = false;
            try (MirrorNode mirror = startMirrorThatTheFrontendDoesNotKnow(backend)) {
                String m1 = "127.0.0.1:" + mirror.port();
                IllegalArgumentException own = assertThrows(IllegalArgumentException.class,
                        () -> a.addMirror("127.0.0.1:" + backend.port()));
                assertTrue(own.getMessage().contains("frontend 0's backend"), own.getMessage());
                IllegalArgumentException malformed = assertThrows(IllegalArgumentException.class,
                        () -> a.addMirror("127.0.0.1"));
                assertTrue(malformed.getMessage().contains("'127.0.0.1' is not host:port"), malformed.getMessage());
                assertEquals(List.of(), a.mirrors(), "refused adds change nothing");
                a.addMirror(m1);
                for (int i = 0; i < 50; i++) {
                    accountsA.transfer(i % 8, (i + 1) % 8, 1);
                    accountsB.transfer(i % 8, (i + 3) % 8, 2);
                }
                a.sync();
                b.sync();
                backend.awaitReplayed();
                MirrorShipper shipper = backend.replication().shippers().get(0);
                Conditions.awaitTrue("the copy is done and the mirror applied what the backend applied", () ->
                        shipper.phase() == MirrorShipper.Phase.STREAMING && shipper.lagTransactions(0) == 0
                                && shipper.lagTransactions(1) == 0
                                && mirror.node().frontendLog(1).checkpoint().appliedTxId()
                                == backend.frontendLog(1).checkpoint().appliedTxId());
                assertEquals(ReplicationLayout.STATE_CATCHING_UP, mirror.state(), "frontend 1 never declared it");
                AsymNvmException refused = assertThrows(AsymNvmException.class, mirror::promote);
                assertEquals(ErrorCode.REPLICA_BEHIND, refused.errorCode(), refused.getMessage());
                assertTrue(refused.getMessage().contains("frontend 1"), refused.getMessage());
                assertTrue(mirror.replication().isMirror(), "a refused promotion changed the role");

                b.addMirror(m1);
                Conditions.awaitTrue("the mirror is in sync once frontend 1 declared it too", mirror::inSync);
                Conditions.awaitTrue("the backend reports it in sync",
                        () -> shipper.mirrorState() == ReplicationLayout.STATE_IN_SYNC);
                IllegalArgumentException twice = assertThrows(IllegalArgumentException.class, () -> b.addMirror(m1));
                assertTrue(twice.getMessage().contains("already a SYNC mirror"), twice.getMessage());
                accountsB.transfer(0, 1, 5); // the refused second add left the first link working
                b.sync();
                a.close();
                b.close();
                closed = true;
            } finally {
                if (!closed) { // a failure: free the connections without waiting for anything
                    a.crash();
                    b.crash();
                }
            }
        }
    }

    /** A mirror of {@code backend} joining it over tcp (ADD_MIRROR, then the backend ships to it). */
    /**
     * A mirror listed before its image copy arrived (a mirror joins the configuration first, and a frontend's
     * follower adds it at once): once this frontend's semantic ring has wrapped, the mirror's FLUSH check could not
     * admit the re-posted records, so the add is refused with REPLICA_BEHIND before the mirror joins the set (commits
     * go on without it), and succeeds once the copy arrived. Found by the permanent-loss drill at its 12th iteration:
     * the frontend's positions passed the 4 MiB ring, the add failed on its FLUSH, and the follower never retried.
     */
    @Test
    void aMirrorWithoutItsImageCopyIsRefusedOnceTheRingWrappedAndAddedAfterTheCopy() {
        try (BackendNode backend = BackendNode.start(config("backend.pm"));
             BackendNode mirror = BackendNode.startMirror(config("mirror.pm"),
                     io.asymnvm.core.layout.SuperblockLayout.withEpoch(backend.superblock(),
                             backend.replication().epoch()));
             AsymNvm nvm = connect(backend, 0)) {
            Accounts accounts = nvm.transactional(Accounts.class, new Accounts.Impl());
            Ledger ledger = nvm.transactional(Ledger.class, new Ledger.Impl());
            accounts.create(PowerFailureRig.ACCOUNTS, PowerFailureRig.INITIAL);
            Pending pending = new Pending(true);
            Random random = new Random(SEED);
            transfer(accounts, pending, random, 3_000); // the 64 KiB semantic ring wraps several times
            String m = "127.0.0.1:" + mirror.port();
            AsymNvmException early = assertThrows(AsymNvmException.class, () -> nvm.addMirror(m));
            assertEquals(ErrorCode.REPLICA_BEHIND, early.errorCode(), early.getMessage());
            assertEquals(List.of(), nvm.mirrors(), "refused before it joined the set");
            transfer(accounts, pending, random, 100); // commits go on without it

            backend.replication().addMirror("local:mirror.pm", mirror.localFabric(), false);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (true) {
                try {
                    nvm.addMirror(m);
                    break;
                } catch (AsymNvmException notYet) {
                    assertEquals(ErrorCode.REPLICA_BEHIND, notYet.errorCode(), notYet.getMessage());
                    assertTrue(System.nanoTime() - deadline < 0, "the copy never arrived: " + notYet.getMessage());
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
                }
            }
            assertEquals(List.of(m), nvm.mirrors());
            transfer(accounts, pending, random, 500);
            Conditions.awaitTrue("the mirror is in sync",
                    () -> mirror.replication().state() == ReplicationLayout.STATE_IN_SYNC);
            assertTrue(Arrays.equals(pending.oracle(), ledger.balances()), "balances "
                    + Arrays.toString(ledger.balances()) + " differ from the oracle "
                    + Arrays.toString(pending.oracle()));
        }
    }

    /**
     * An add that fails after the mirror joined the set (here its first FLUSH, which follows the re-post of the
     * retained records) is undone: the mirror leaves the set, later commits are neither posted to it nor wait for
     * it, it stays catching up (never declared, so not promotable), and it can be added again. Before, the set kept
     * it: every later commit waited for a mirror that had never caught up, and a retried add was refused as
     * "already a SYNC mirror".
     */
    @Test
    void anAddThatFailsAfterTheMirrorJoinedIsUndoneAndTheMirrorCanBeAddedAgain() {
        try (BackendNode backend = BackendNode.start(config("backend.pm"));
             MirrorNode mirror = startMirrorThatTheFrontendDoesNotKnow(backend);
             AsymNvm nvm = connect(backend, 0);
             FailingFlushes faulty = new FailingFlushes(new TcpFabric("127.0.0.1", mirror.port(), null))) {
            Accounts accounts = nvm.transactional(Accounts.class, new Accounts.Impl());
            Ledger ledger = nvm.transactional(Ledger.class, new Ledger.Impl());
            accounts.create(PowerFailureRig.ACCOUNTS, PowerFailureRig.INITIAL);
            Pending pending = new Pending(true);
            Random random = new Random(SEED);
            transfer(accounts, pending, random, 200);
            String m = "127.0.0.1:" + mirror.port();

            AsymNvmException failed = assertThrows(AsymNvmException.class, () -> nvm.addMirror(faulty, m));
            assertEquals(ErrorCode.CONNECTION_LOST, failed.errorCode(), failed.getMessage());
            assertEquals(1, faulty.flushes.get(), "the add failed on the FLUSH it posts after the mirror joined");
            assertEquals(List.of(), nvm.mirrors(), "the failed add was undone");
            long writesAtUndo = faulty.writes.get();
            transfer(accounts, pending, random, 200); // would wait for the mirror (and fail) had it stayed
            assertEquals(writesAtUndo, faulty.writes.get(), "records posted to the mirror after the undo");
            assertEquals(1, faulty.flushes.get(), "FLUSHes posted to the mirror after the undo");
            assertEquals(ReplicationLayout.STATE_CATCHING_UP, mirror.state(), "never declared: not in sync");

            nvm.addMirror(m); // a healthy add after the undone one, at once (see the next test for the race)
            assertEquals(List.of(m), nvm.mirrors());
            transfer(accounts, pending, random, 200);
            Conditions.awaitTrue("the mirror is in sync", mirror::inSync);
            assertTrue(Arrays.equals(pending.oracle(), ledger.balances()), "balances "
                    + Arrays.toString(ledger.balances()) + " differ from the oracle "
                    + Arrays.toString(pending.oracle()));
        }
    }

    /**
     * The race behind the undone add's immediate re-add (once in 5 loaded runs: RING_CORRUPT, the frontend
     * quarantined on the mirror for good). The first add told the mirror that this frontend's records start in its
     * ring at the re-post position P (MIRROR_POSTING's semantic start, which also raised the mirror's durable
     * watermark to P); the records before P had been applied on the backend and reach the mirror as redo only. The
     * add's FLUSH failed and it was undone. The re-add attaches to the mirror again, and that attach scanned the
     * ring from the mirror's checkpoint head to the watermark P: while the backend's shipper had not yet brought the
     * mirror's replay to P, that range holds records the mirror never receives, taken for damage. Here the shipper
     * is held, deterministically, at its first redo WRITE after the mirror had caught up, so the mirror's replay
     * stays behind P through both adds; then it is released, the mirror gets in sync, the backend is lost for good
     * and every acknowledged transfer is on the promoted mirror.
     */
    @Test
    void anUndoneAddIsRepeatedAtOnceWhileTheShipperIsBehindItsStartAndNothingIsLost() throws Exception {
        BackendConfiguration backendConfig = config("backend.pm");
        BackendNode backend = BackendNode.start(backendConfig);
        try (BackendNode mirror = BackendNode.startMirror(config("mirror.pm"), io.asymnvm.core.layout.SuperblockLayout
                     .withEpoch(backend.superblock(), backend.replication().epoch()));
             FailingFlushes faulty = new FailingFlushes(new TcpFabric("127.0.0.1", mirror.port(), null))) {
            HeldShipper shipping = new HeldShipper(mirror.localFabric());
            MirrorShipper shipper = backend.replication().addMirror("local:mirror.pm", shipping, false);
            AsymNvm nvm = connect(backend, 0);
            boolean crashed = false;
            try {
                Accounts accounts = nvm.transactional(Accounts.class, new Accounts.Impl());
                nvm.transactional(Ledger.class, new Ledger.Impl());
                accounts.create(PowerFailureRig.ACCOUNTS, PowerFailureRig.INITIAL);
                Pending pending = new Pending(true);
                Random random = new Random(SEED);
                transfer(accounts, pending, random, 100);
                nvm.sync();
                Conditions.awaitTrue("the copy is done and the mirror applied what the backend applied", () ->
                        shipper.phase() == MirrorShipper.Phase.STREAMING
                                && mirror.frontendLog(0).checkpoint().appliedTxId()
                                == backend.frontendLog(0).checkpoint().appliedTxId());
                shipping.armed = true; // the shipper stops at its next redo WRITE: the mirror's replay stays here
                transfer(accounts, pending, random, 200);
                nvm.sync(); // applied on the backend and released here: an add re-posts from past these records
                assertTrue(shipping.held.await(60, TimeUnit.SECONDS), "the shipper never shipped the new redo");
                long mirrorHead = mirror.frontendLog(0).checkpoint().semHead();
                long start = backend.frontendLog(0).checkpoint().semHead();
                assertTrue(mirrorHead < start, "the mirror's replay (semantic head " + mirrorHead
                        + ") is behind the next add's start " + start);
                String m = "127.0.0.1:" + mirror.port();

                AsymNvmException failed = assertThrows(AsymNvmException.class, () -> nvm.addMirror(faulty, m));
                assertEquals(ErrorCode.CONNECTION_LOST, failed.errorCode(), failed.getMessage());
                assertEquals(List.of(), nvm.mirrors(), "the failed add was undone");
                transfer(accounts, pending, random, 50);
                nvm.addMirror(m); // at once: before, RING_CORRUPT here, and the frontend quarantined on the mirror
                assertEquals(List.of(m), nvm.mirrors());
                assertNull(mirror.frontendLog(0).quarantine(), "quarantined on the mirror");
                assertEquals(mirrorHead, mirror.frontendLog(0).checkpoint().semHead(), "the shipper was held");

                shipping.release.countDown();
                transfer(accounts, pending, random, 200);
                Conditions.awaitTrue("the mirror is in sync",
                        () -> mirror.replication().state() == ReplicationLayout.STATE_IN_SYNC);
                transfer(accounts, pending, random, 50); // acknowledged by both, not necessarily applied anywhere
                nvm.crash();
                crashed = true;
                backend.close();
                Files.delete(backendConfig.pmFile());
                mirror.promote();
                assertEquals(0, mirror.frontendLog(0).semanticStart(), "a backend's ring holds all past its head");
                try (AsymNvm again = connect(mirror, 0)) {
                    again.transactional(Accounts.class, new Accounts.Impl());
                    Ledger fresh = again.transactional(Ledger.class, new Ledger.Impl());
                    again.recover();
                    assertTrue(Arrays.equals(pending.oracle(), fresh.balances()), "the promoted mirror holds "
                            + Arrays.toString(fresh.balances()) + ", not the " + pending.acknowledged()
                            + " acknowledged transfers " + Arrays.toString(pending.oracle()));
                }
            } finally {
                shipping.release.countDown(); // a failed check must not leave the shipper held
                if (!crashed) {
                    nvm.crash();
                }
            }
        } finally {
            backend.close();
        }
    }

    /** The shipper's fabric: once armed, its next WRITE of frontend 0's redo waits until released. */
    private static final class HeldShipper extends ForwardingFabric {
        final CountDownLatch held = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);
        volatile boolean armed;

        HeldShipper(Fabric delegate) {
            super(delegate);
        }

        @Override
        protected FabricConnection wrap(FabricConnection connection) {
            return new ForwardingConnection(connection) {
                @Override
                public Completion write(int regionId, long offset, byte[] data, int dataOffset, int length) {
                    if (armed && regionId == RegionIds.redo(0)) {
                        armed = false;
                        held.countDown();
                        try {
                            if (!release.await(60, TimeUnit.SECONDS)) {
                                throw new IllegalStateException("the held shipper was never released");
                            }
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                            throw new IllegalStateException(e);
                        }
                    }
                    return super.write(regionId, offset, data, dataOffset, length);
                }
            };
        }
    }

    /**
     * A frontend that crashed and never returns keeps a joining mirror catching up only while it may hold commits
     * that exist on the backend only: once it has had no session for the backend's {@code frontendGoneMillis} and
     * everything of it is applied on the backend and the mirror, the mirror no longer waits for its declaration
     * (logged, listed by the shipper). One that crashed with acknowledged commits not applied (its redo held) keeps
     * the mirror catching up, named in the promotion's refusal, until it recovers. After promotion every
     * acknowledged transfer of all three frontends is on the mirror.
     */
    @Test
    void aCrashedFrontendHoldsAJoiningMirrorBackOnlyWhileItsCommitsAreOnTheBackendAlone() {
        BackendConfiguration backendConfig = BackendConfiguration.builder(dir.resolve("backend.pm")).size(16L << 20)
                .maxFrontends(3).semRingCapacity(64L << 10).redoRingCapacity(256L << 10).slabSize(256 << 10)
                .port(0).bindHost("127.0.0.1").credentials(dir.resolve("cluster.credentials"))
                .frontendGoneMillis(300).conclude();
        FrontendOptions heldRedo = FrontendOptions.builder().credentials(dir.resolve("cluster.credentials"))
                .reconnectTimeoutMillis(300).redoBatch(1 << 20, 16 << 20, 10_000_000).conclude();
        BackendNode backend = BackendNode.start(backendConfig);
        Random random = new Random(SEED);
        Pending[] oracles = {new Pending(true), new Pending(true), new Pending(true)};
        try (MirrorNode mirror = startMirrorThatTheFrontendDoesNotKnow(backend)) {
            AsymNvm a = connect(backend, 0);
            AsymNvm b = connect(backend, 1);
            AsymNvm c = AsymNvm.connect("tcp", "127.0.0.1:" + backend.port(), List.of(), 2, heldRedo);
            AsymNvm[] all = {a, b, c};
            Accounts[] accounts = new Accounts[3];
            for (int f = 0; f < 3; f++) {
                accounts[f] = all[f].transactional(Accounts.class, new Accounts.Impl());
                accounts[f].create(PowerFailureRig.ACCOUNTS, PowerFailureRig.INITIAL);
                transfer(accounts[f], oracles[f], random, 50);
            }
            b.sync();
            b.crash(); // everything applied on the backend: only the mirror's copy and redo are missing
            c.crash(); // acknowledged commits as semantic records on the backend only (redo held in the frontend)
            String m1 = "127.0.0.1:" + mirror.port();
            a.addMirror(m1);
            transfer(accounts[0], oracles[0], random, 50);
            MirrorShipper shipper = backend.replication().shippers().get(0);
            Conditions.awaitTrue("frontend 1 no longer waited for, frontend 2 holding the mirror back", WAIT,
                    () -> shipper.waivedFrontends().equals(List.of(1))
                            && shipper.heldBackFrontends().equals(List.of(2)),
                    () -> "waived " + shipper.waivedFrontends() + ", held back " + shipper.heldBackFrontends());
            assertEquals(ReplicationLayout.STATE_CATCHING_UP, mirror.state(), "frontend 2's commits are not there");
            AsymNvmException refused = assertThrows(AsymNvmException.class, mirror::promote);
            assertEquals(ErrorCode.REPLICA_BEHIND, refused.errorCode(), refused.getMessage());
            assertTrue(refused.getMessage().contains("frontend 2"), refused.getMessage());

            try (AsymNvm again = connect(backend, 2)) { // frontend 2 recovers (re-executes), then detaches
                again.transactional(Accounts.class, new Accounts.Impl());
                again.recover();
                again.sync();
            }
            Conditions.awaitTrue("the mirror is in sync once frontend 2 recovered and left", WAIT, mirror::inSync,
                    () -> "waived " + shipper.waivedFrontends() + ", held back " + shipper.heldBackFrontends());
            a.sync();
            Conditions.awaitTrue("the mirror applied what the backend applied", () -> shipper.lagTransactions(0) == 0);
            a.crash();
            backend.close();
            Files.delete(backendConfig.pmFile());
            mirror.promote();
            for (int f = 0; f < 3; f++) {
                try (AsymNvm onMirror = connect(mirror.node(), f)) {
                    onMirror.transactional(Accounts.class, new Accounts.Impl());
                    Ledger ledger = onMirror.transactional(Ledger.class, new Ledger.Impl());
                    onMirror.recover();
                    long[] balances = ledger.balances();
                    assertTrue(Arrays.equals(oracles[f].oracle(), balances), "frontend " + f + " on the promoted "
                            + "mirror: " + Arrays.toString(balances) + ", acknowledged "
                            + Arrays.toString(oracles[f].oracle()));
                }
            }
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        } finally {
            backend.close();
        }
    }

    /** A fabric whose FLUSHes all fail with {@code CONNECTION_LOST} (injected); counts FLUSHes and WRITEs. */
    private static final class FailingFlushes extends ForwardingFabric {
        final AtomicLong flushes = new AtomicLong();
        final AtomicLong writes = new AtomicLong();

        FailingFlushes(Fabric delegate) {
            super(delegate);
        }

        @Override
        protected FabricConnection wrap(FabricConnection connection) {
            return new ForwardingConnection(connection) {
                @Override
                public Completion write(int regionId, long offset, byte[] data, int dataOffset, int length) {
                    writes.incrementAndGet();
                    return super.write(regionId, offset, data, dataOffset, length);
                }

                @Override
                public Completion flush(long stamp, boolean stamped) {
                    flushes.incrementAndGet();
                    Completion c = new Completion(counters());
                    c.fail(new AsymNvmException(ErrorCode.CONNECTION_LOST, "injected: FLUSH after the join"));
                    return c;
                }
            };
        }
    }

    private static void transfer(Accounts accounts, Pending pending, Random random, int n) {
        MirrorJoinFixture.transfer(accounts, pending, random, n);
    }

    private MirrorNode startMirrorThatTheFrontendDoesNotKnow(BackendNode backend) {
        return MirrorNode.start(config("mirror.pm"), "127.0.0.1", backend.port());
    }
}
