package io.asymnvm.system;

import io.asymnvm.backend.BackendConfiguration;
import io.asymnvm.backend.BackendNode;
import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.fabric.Fabric;
import io.asymnvm.core.layout.ReplicationLayout;
import io.asymnvm.core.layout.SuperblockLayout;
import io.asymnvm.core.layout.SuperblockLayout.Superblock;
import io.asymnvm.frontend.AsymNvm;
import io.asymnvm.frontend.FrontendOptions;
import io.asymnvm.recovery.crash.SimulatedPmRegion;
import io.asymnvm.recovery.crash.SimulatedPowerFailure;
import io.asymnvm.system.PowerFailureRig.Pending;
import io.asymnvm.system.PowerFailureRig.Transfer;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;

/**
 * The bank workload with a backend and one SYNC mirror, each over its own {@link SimulatedPmRegion}, on the local
 * fabric, with the power cut at a chosen persist call of the backend's region, of the mirror's, or of both at once
 * (issue 9, item 8). One frontend (id 0, one thread) runs seeded SYNC transfers; it is opened with the mirror, so
 * each transfer is acknowledged only once its semantic record is durable on both nodes.
 *
 * <p>Families ({@link Family}): the phase in which the power is cut (shipping: the mirror is in sync before the
 * transfers start; catch-up: the mirror joins as the frontend opens, its image copy and catch-up run while the
 * accounts are created and the transfers commit; promotion: the backend is lost after half of them and the
 * mirror's power is cut while it is promoted and the frontend resumes on it; late join: see
 * {@link Phase#LATE_JOIN}) and whose power is cut. The crash point {@code k} counts the persist
 * calls of the cut region from the arming (after the accounts were created and applied; for promotion, from the
 * moment the backend is lost), over all threads.
 *
 * <p>Afterwards the backend is lost for good whenever its power was cut: the mirror, live or restarted from a crash
 * image of its region (when its power was cut too), is promoted and a new incarnation of the frontend (same id)
 * attaches to it and recovers (re-executing the semantic records the promoted node has not applied). Its balances
 * must be the acknowledged oracle plus a prefix of the pending transfers (total constant: no partial transfer);
 * one more transfer must then commit. A mirror that is still catching up (or that restarted without a durable
 * in-sync mark, {@code MirrorStateLayout}) must refuse the promotion with {@code REPLICA_BEHIND}: that outcome is
 * counted, not a violation, since promoting it would serve a heap that misses acknowledged transfers. A mirror that
 * restarted in sync must be promotable and must hold every acknowledged transfer. When only the mirror's power
 * is cut the backend keeps serving: a transfer posted after the mirror died must not be acknowledged (the commit
 * waits for the mirror, then fails with {@code CONNECTION_LOST}), and a new incarnation on the backend must see the
 * oracle plus a prefix of the pending transfers.
 *
 * <p>Small geometry as in {@link PowerFailureRig} (4 MiB images, 16 KiB rings, 64 KiB slabs): the image copy to the
 * mirror that starts every run stays short.
 */
final class MirrorPowerFailureRig {
    static final int ACCOUNTS = PowerFailureRig.ACCOUNTS;
    static final long INITIAL = PowerFailureRig.INITIAL;
    /** Half of PowerFailureRig's image: every run copies the heap to the mirror once. */
    static final int PM_SIZE = 4 << 20;
    static final long RING = PowerFailureRig.RING;
    private static final long MIRROR_RECONNECT_MILLIS = 20;

    /** When the power is cut and whose. */
    enum Family {
        SHIPPING_BACKEND(Phase.SHIPPING, true, false),
        SHIPPING_MIRROR(Phase.SHIPPING, false, true),
        SHIPPING_BOTH(Phase.SHIPPING, true, true),
        CATCH_UP_BACKEND(Phase.CATCH_UP, true, false),
        CATCH_UP_MIRROR(Phase.CATCH_UP, false, true),
        CATCH_UP_BOTH(Phase.CATCH_UP, true, true),
        PROMOTION_MIRROR(Phase.PROMOTION, false, true),
        /**
         * The mirror's power is cut while shipping (its persist points are counted); the backend is then lost for
         * good as well, and the mirror, restarted from its crash image, is promoted if its persisted mark says it
         * was in sync.
         */
        SHIPPING_MIRROR_THEN_BACKEND(Phase.SHIPPING, false, true, true),
        /** The same with the mirror's power cut during its image copy and catch-up. */
        CATCH_UP_MIRROR_THEN_BACKEND(Phase.CATCH_UP, false, true, true),
        /**
         * The same with the mirror in sync, then copied again (its shipper re-attaches after a quarter of the
         * transfers): the persisted in-sync mark must be withdrawn before the new copy touches anything.
         */
        REATTACH_MIRROR_THEN_BACKEND(Phase.REATTACH, false, true, true),
        /** The mirror joins (or its shipper re-attaches: a new copy) after a quarter of the transfers. */
        LATE_JOIN_BACKEND(Phase.LATE_JOIN, true, false),
        /** The backend's power is cut while a running frontend adds the mirror ({@link Phase#LATE_ADD}). */
        LATE_ADD_BACKEND(Phase.LATE_ADD, true, false),
        /**
         * The mirror's power is cut while a running frontend adds it; the backend is then lost for good, and the
         * mirror, restarted from its crash image, is promoted only if its persisted mark says it was in sync.
         */
        LATE_ADD_MIRROR_THEN_BACKEND(Phase.LATE_ADD, false, true, true),
        /** Both lose power at once while a running frontend adds the mirror. */
        LATE_ADD_BOTH(Phase.LATE_ADD, true, true);

        final Phase phase;
        final boolean backendCut;
        final boolean mirrorCut;
        /** The backend is lost for good after the mirror's power was cut (the mirror restarts and is promoted). */
        final boolean backendLostAfter;

        Family(Phase phase, boolean backendCut, boolean mirrorCut) {
            this(phase, backendCut, mirrorCut, false);
        }

        Family(Phase phase, boolean backendCut, boolean mirrorCut, boolean backendLostAfter) {
            this.phase = phase;
            this.backendCut = backendCut;
            this.mirrorCut = mirrorCut;
            this.backendLostAfter = backendLostAfter;
        }

        /** The region whose persist calls the crash point counts: the backend's unless only the mirror's is cut. */
        boolean countsBackend() {
            return backendCut;
        }
    }

    enum Phase {
        SHIPPING, CATCH_UP, PROMOTION,
        /** As SHIPPING, and the backend's shipper re-attaches (a new image copy) after a quarter of the plan. */
        REATTACH,
        /** The frontend dual-posts to the mirror from its start; the copy starts after a quarter of the plan. */
        LATE_JOIN,
        /**
         * The frontend runs without a mirror for three quarters of the plan; then the backend starts shipping to
         * the mirror (image copy, catch-up) and the frontend adds it at run time ({@code AsymNvm.addMirror}:
         * re-post of its retained records, FLUSH, MIRROR_POSTING declaration), and the last quarter commits with
         * it. The crash point counts from just before the add.
         */
        LATE_ADD
    }

    /** How a crash state ended. */
    enum Outcome {
        /** The mirror was promoted and the new incarnation found an allowed state. */
        PROMOTED,
        /** The promoted mirror had already persisted its promotion and restarted as the backend. */
        RESTARTED_PROMOTED,
        /** Promotion refused with REPLICA_BEHIND: the mirror was catching up. */
        REFUSED_CATCHING_UP,
        /**
         * Promotion refused with REPLICA_BEHIND after the mirror restarted from its crash image (its persisted mark
         * did not say in sync: it was catching up, or the mark was not durable yet).
         */
        REFUSED_AFTER_RESTART,
        /**
         * The mirror restarted from its crash image in sync (its persisted mark), replayed the confirmed redo, was
         * promoted, and the new incarnation found an allowed state.
         */
        PROMOTED_AFTER_RESTART,
        /** Only the mirror lost power: the backend kept every acknowledged transfer. */
        BACKEND_SERVED,
        /** The checks found a violation (recorded). */
        VIOLATION
    }

    /** What one run left: the regions, the oracle, whether power was lost, and anything unexpected. */
    record Run(Family family, long crashPoint, boolean powerLost, long persists, Pending pending,
               SimulatedPmRegion backendRegion, SimulatedPmRegion mirrorRegion, BackendNode mirror,
               boolean mirrorInSync, String unexpected) {

        String site() {
            SimulatedPmRegion r = family.countsBackend() ? backendRegion : mirrorRegion;
            return PowerFailureRig.siteOf(r);
        }
    }

    private record Frontend(AsymNvm nvm, Accounts accounts, Ledger ledger) {
    }

    private final BackendConfiguration backendConfig;
    private final BackendConfiguration mirrorConfig;
    private final FrontendOptions options;
    private final long seed;
    private final List<Transfer> plan = new ArrayList<>();

    MirrorPowerFailureRig(Path dir, long seed, int transfers) {
        this.seed = seed;
        this.backendConfig = config(dir.resolve("backend.pm"));
        this.mirrorConfig = config(dir.resolve("mirror.pm"));
        this.options = FrontendOptions.builder().reconnectTimeoutMillis(2_000).pollIntervalMicros(100)
                .mirrorReconnectTimeoutMillis(MIRROR_RECONNECT_MILLIS).conclude();
        Random random = new Random(seed);
        for (int i = 0; i < transfers; i++) {
            plan.add(new Transfer(random.nextInt(ACCOUNTS), random.nextInt(ACCOUNTS), 1 + random.nextInt(1000)));
        }
    }

    private static BackendConfiguration config(Path file) {
        return BackendConfiguration.builder(file).size(PM_SIZE).maxFrontends(2).semRingCapacity(RING)
                .redoRingCapacity(RING).slabSize(64 << 10).conclude();
    }

    long seed() {
        return seed;
    }

    /**
     * Runs the family's workload with the power cut at persist {@code crashPoint} of the counted region since the
     * arming ({@code < 0}: not at all, the dry run). The mirror node is left running when its power was not cut
     * (the caller promotes it); every other node is stopped.
     */
    Run run(Family family, long crashPoint) {
        String name = "seed " + seed + ", " + family + ", crash point " + crashPoint;
        SimulatedPmRegion backendRegion = new SimulatedPmRegion("backend PM (" + name + ")", PM_SIZE);
        SimulatedPmRegion mirrorRegion = new SimulatedPmRegion("mirror PM (" + name + ")", PM_SIZE);
        SimulatedPmRegion counted = family.countsBackend() ? backendRegion : mirrorRegion;
        AtomicReference<BackendNode> backend = new AtomicReference<>();
        AtomicReference<BackendNode> mirror = new AtomicReference<>();
        AtomicReference<Frontend> fe = new AtomicReference<>();
        AtomicReference<String> unexpected = new AtomicReference<>();
        Pending pending = new Pending(true);
        long[] base = {-1};
        Thread worker = new Thread(() -> {
            try {
                backend.set(BackendNode.start(backendConfig, backendRegion));
                Superblock sb = SuperblockLayout.withEpoch(backend.get().superblock(),
                        backend.get().replication().epoch());
                mirror.set(BackendNode.startMirror(mirrorConfig, mirrorRegion, sb));
                boolean late = family.phase == Phase.LATE_JOIN || family.phase == Phase.LATE_ADD;
                if (!late) {
                    addMirror(backend.get(), mirror.get());
                }
                if (family.phase != Phase.CATCH_UP && !late) {
                    awaitOrFail("the mirror is in sync", () -> inSync(mirror.get()));
                }
                fe.set(open(backend.get().localFabric(), family.phase == Phase.LATE_ADD ? List.of()
                        : List.of(mirror.get().localFabric())));
                fe.get().accounts().create(ACCOUNTS, INITIAL);
                fe.get().nvm().sync();
                if (family.phase == Phase.PROMOTION) {
                    transfers(fe.get(), plan.subList(0, plan.size() / 2), pending, null);
                    fe.get().nvm().sync();
                    loseBackend(fe.get(), backend.get(), backendRegion);
                    fe.set(null);
                    arm(counted, crashPoint, base);
                    BackendNode m = mirror.get();
                    m.promote();
                    Frontend resumed = open(m.localFabric(), List.of());
                    fe.set(resumed);
                    resumed.nvm().recover();
                    transfers(resumed, plan.subList(plan.size() / 2, plan.size()), pending, null);
                    resumed.nvm().close();
                    fe.set(null);
                    return;
                }
                if (family.phase == Phase.LATE_ADD) {
                    int head = plan.size() * 3 / 4;
                    transfers(fe.get(), plan.subList(0, head), pending, null);
                    arm(counted, crashPoint, base);
                    addMirror(backend.get(), mirror.get());
                    addToFrontend(fe.get(), mirror.get());
                    transfers(fe.get(), plan.subList(head, plan.size()), pending, mirrorRegion);
                } else if (family.phase == Phase.REATTACH) {
                    arm(counted, crashPoint, base);
                    int quarter = plan.size() / 4;
                    transfers(fe.get(), plan.subList(0, quarter), pending, mirrorRegion);
                    backend.get().replication().removeMirror("local:mirror");
                    addMirror(backend.get(), mirror.get());
                    transfers(fe.get(), plan.subList(quarter, plan.size()), pending, mirrorRegion);
                } else if (family.phase == Phase.LATE_JOIN) {
                    arm(counted, crashPoint, base);
                    int quarter = plan.size() / 4;
                    transfers(fe.get(), plan.subList(0, quarter), pending, mirrorRegion);
                    addMirror(backend.get(), mirror.get());
                    transfers(fe.get(), plan.subList(quarter, plan.size()), pending, mirrorRegion);
                } else {
                    arm(counted, crashPoint, base);
                    transfers(fe.get(), plan, pending, mirrorRegion);
                }
                fe.get().nvm().sync();
                if (crashPoint < 0) { // the dry run: the mirror must have caught up by now
                    awaitOrFail("the mirror is in sync", () -> inSync(mirror.get()));
                }
            } catch (AckedWithoutMirror t) {
                unexpected.compareAndSet(null, t.getMessage());
            } catch (Throwable t) {
                if (!counted.powerLost() && SimulatedPowerFailure.findIn(t) == null) {
                    unexpected.compareAndSet(null, "workload failed without a power failure: "
                            + PowerFailureRig.describe(t));
                }
            }
        }, "mirror-bank-worker-" + crashPoint);
        worker.start();
        if (family.phase == Phase.PROMOTION || family.backendCut) {
            // the node the frontend commits to dies: a new incarnation of the frontend resumes later
            if (!PowerFailureRig.awaitUntil(() -> !worker.isAlive() || counted.powerLost())) {
                unexpected.compareAndSet(null, "workload hung: " + PowerFailureRig.stackOf(worker));
            }
            if (family.mirrorCut) {
                cutNow(mirrorRegion);
            }
            crashQuietly(fe.get());
        }
        if (!PowerFailureRig.join(worker)) {
            unexpected.compareAndSet(null, "worker did not stop after the power failure: "
                    + PowerFailureRig.stackOf(worker));
            worker.interrupt();
        }
        crashQuietly(fe.get());
        boolean mirrorDead = family.mirrorCut
                && (mirrorRegion.powerLost() || family.backendCut || family.backendLostAfter);
        // as the workload left it: the cuts below (and a dead node's close) are the rig's, not the crash point's
        boolean powerLost = counted.powerLost();
        long persists = base[0] < 0 ? 0 : counted.persistCount() - base[0];
        if (family.mirrorCut) {
            cutNow(mirrorRegion); // the dry run of a mirror family too: its image is what recovery gets
        }
        // the backend is lost for good when its power was cut (and in the promotion family, by construction)
        boolean keepBackend = !family.backendCut && family.phase != Phase.PROMOTION && !family.backendLostAfter;
        if (family.backendLostAfter) {
            cutNow(backendRegion); // lost for good after the mirror: only the mirror's crash image is left
        }
        if (!keepBackend) {
            closeQuietly(backend.get());
        }
        boolean mirrorInSync = mirror.get() != null && inSync(mirror.get());
        if (mirrorDead || family.phase == Phase.PROMOTION) {
            closeQuietly(mirror.get());
        }
        Run run = new Run(family, crashPoint, powerLost, persists, pending, backendRegion, mirrorRegion,
                mirrorDead || family.phase == Phase.PROMOTION ? null : mirror.get(), mirrorInSync, unexpected.get());
        if (keepBackend) {
            this.liveBackend = backend.get();
        }
        return run;
    }

    /** A SYNC transfer returned although the mirror had lost power before it was posted. */
    private static final class AckedWithoutMirror extends RuntimeException {
        AckedWithoutMirror(String message) {
            super(message);
        }
    }

    /** The backend node still serving after a run whose power cut spared it (mirror families), or null. */
    private BackendNode liveBackend;

    private static boolean inSync(BackendNode mirror) {
        return mirror.replication().state() == ReplicationLayout.STATE_IN_SYNC;
    }

    private static void addMirror(BackendNode backend, BackendNode mirror) {
        backend.replication().addMirror("local:mirror", mirror.localFabric());
    }

    /**
     * The running frontend adds the mirror ({@code AsymNvm.addMirror}); a refusal with REPLICA_BEHIND (its image
     * copy has not arrived yet) is tried again, as the cluster follower does, at most for the rig's wait bound.
     */
    private static void addToFrontend(Frontend f, BackendNode mirror) {
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(20);
        for (int attempt = 1; ; attempt++) {
            try {
                f.nvm().addMirror(mirror.localFabric(), "local:mirror");
                return;
            } catch (AsymNvmException e) {
                if (e.errorCode() != ErrorCode.REPLICA_BEHIND || System.nanoTime() - deadline > 0) {
                    throw e;
                }
                java.util.concurrent.locks.LockSupport.parkNanos(java.util.concurrent.TimeUnit.MILLISECONDS
                        .toNanos(Math.min(attempt, 20)));
            }
        }
    }

    /** Arms the failure at {@code crashPoint} persists from now (no persist slips in between). */
    private static void arm(SimulatedPmRegion region, long crashPoint, long[] base) {
        synchronized (region) {
            base[0] = region.persistCount();
            if (crashPoint >= 0) {
                region.failAtPersist(base[0] + crashPoint);
            }
        }
    }

    /** Cuts a region's power at its next persist call (nothing more it persists reaches the media). */
    private static void cutNow(SimulatedPmRegion region) {
        synchronized (region) {
            if (!region.powerLost()) {
                region.failAtPersist(region.persistCount());
            }
        }
    }

    /** The backend's machine is lost (mid-run, between transfers): the frontend with it, the node's power cut. */
    private static void loseBackend(Frontend f, BackendNode backend, SimulatedPmRegion region) {
        f.nvm().crash();
        cutNow(region);
        closeQuietly(backend);
    }

    /**
     * SYNC transfers, each posted then acknowledged when its call returns. {@code mirrorRegion} non-null: a
     * transfer posted after the mirror lost power must not return (it is not durable on the mirror).
     */
    private void transfers(Frontend f, List<Transfer> ts, Pending pending, SimulatedPmRegion mirrorRegion) {
        for (Transfer t : ts) {
            boolean mirrorDeadBefore = mirrorRegion != null && mirrorRegion.powerLost();
            pending.post(t);
            f.accounts().transfer(t.from(), t.to(), t.amount());
            if (mirrorDeadBefore) {
                throw new AckedWithoutMirror("transfer " + t + " was acknowledged although it was posted after "
                        + "the SYNC mirror lost power: acknowledged without the mirror");
            }
            pending.acknowledge(t);
        }
    }

    /**
     * The checks after a run (see the class comment). Returns the outcome; a violation is added to
     * {@code violations} prefixed with {@code where} (seed, family, crash point, image seed, site).
     */
    Outcome check(Run run, Random imageRandom, String where, List<String> violations) {
        BackendNode live = liveBackend;
        liveBackend = null;
        try {
            if (run.unexpected() != null) {
                violations.add(where + ": " + run.unexpected());
                return Outcome.VIOLATION;
            }
            if (live != null) { // only the mirror's power was cut: the backend keeps serving
                String problem = resumeAndCheck(live.localFabric(), run, "the backend, which kept serving");
                if (problem != null) {
                    violations.add(where + ": " + problem);
                    return Outcome.VIOLATION;
                }
                return Outcome.BACKEND_SERVED;
            }
            if (run.mirror() != null) { // the backend is lost, the mirror lives
                return promoteAndCheck(run.mirror(), run, run.mirrorInSync() ? Outcome.PROMOTED
                        : Outcome.REFUSED_CATCHING_UP, where, violations);
            }
            // the mirror lost power too: restart it from a crash image of its region
            byte[] image = run.mirrorRegion().crashImage(imageRandom);
            SimulatedPmRegion region = new SimulatedPmRegion("restarted mirror " + where, image);
            Superblock sb = SuperblockLayout.decode(region.read(0, SuperblockLayout.LENGTH), region.name(),
                    region.size());
            boolean promoted = SuperblockLayout.effectiveEpoch(region, sb) > sb.epoch();
            BackendNode node = promoted ? BackendNode.start(backendConfig, region)
                    : BackendNode.startMirror(mirrorConfig, region, null);
            try {
                if (promoted) {
                    String problem = resumeAndCheck(node.localFabric(), run, "the restarted promoted mirror");
                    if (problem != null) {
                        violations.add(where + ": " + problem);
                        return Outcome.VIOLATION;
                    }
                    return Outcome.RESTARTED_PROMOTED;
                }
                return promoteAndCheck(node, run, Outcome.REFUSED_AFTER_RESTART, where, violations);
            } finally {
                closeQuietly(node);
            }
        } catch (Throwable t) {
            violations.add(where + ": checks failed: " + PowerFailureRig.describe(t));
            return Outcome.VIOLATION;
        } finally {
            closeQuietly(live);
            closeQuietly(run.mirror());
        }
    }

    /**
     * Promotes {@code mirror}; a refusal with REPLICA_BEHIND is {@code refusal} (allowed unless the mirror was in
     * sync and live); else a new incarnation resumes on it and must see an allowed state.
     */
    private Outcome promoteAndCheck(BackendNode mirror, Run run, Outcome refusal, String where,
                                    List<String> violations) {
        boolean inSync = inSync(mirror);
        try {
            mirror.promote();
        } catch (AsymNvmException e) {
            if (e.errorCode() == ErrorCode.REPLICA_BEHIND && !inSync) {
                return refusal == Outcome.PROMOTED ? Outcome.REFUSED_CATCHING_UP : refusal;
            }
            violations.add(where + ": promotion of a mirror " + (inSync ? "in sync" : "catching up")
                    + " failed: " + PowerFailureRig.describe(e));
            return Outcome.VIOLATION;
        }
        if (!inSync) {
            violations.add(where + ": a mirror that was not in sync was promoted");
            return Outcome.VIOLATION;
        }
        String problem = resumeAndCheck(mirror.localFabric(), run, "the promoted mirror");
        if (problem != null) {
            violations.add(where + ": " + problem);
            return Outcome.VIOLATION;
        }
        return refusal == Outcome.REFUSED_AFTER_RESTART ? Outcome.PROMOTED_AFTER_RESTART : Outcome.PROMOTED;
    }

    /**
     * A new incarnation of frontend 0 attaches to {@code fabric}, recovers and reads the balances, which must be
     * allowed by {@code run}; one more transfer must then commit. Null when all holds, else what is wrong.
     */
    private String resumeAndCheck(Fabric fabric, Run run, String node) {
        Frontend f = null;
        try {
            f = open(fabric, List.of());
            f.nvm().recover();
            long[] balances = f.ledger().balances();
            String problem = allowed(balances, run);
            if (problem != null) {
                return "on " + node + ": " + problem;
            }
            f.accounts().transfer(0, 1, 1);
            long[] expected = balances.clone();
            new Transfer(0, 1, 1).applyTo(expected);
            long[] after = f.ledger().balances();
            if (!Arrays.equals(expected, after)) {
                return "on " + node + ": a transfer after recovery gave " + Arrays.toString(after) + ", expected "
                        + Arrays.toString(expected);
            }
            f.nvm().close();
            f = null;
            return null;
        } catch (RuntimeException e) {
            return "on " + node + ": recovery failed: " + PowerFailureRig.describe(e);
        } finally {
            crashQuietly(f);
        }
    }

    /** Null if {@code balances} is the oracle plus a prefix of the pending transfers, else what is wrong. */
    static String allowed(long[] balances, Run run) {
        if (balances == null) {
            return "the accounts are gone (they were created and applied before the power was cut)";
        }
        long total = Arrays.stream(balances).sum();
        Pending p = run.pending();
        if (total != ACCOUNTS * INITIAL) {
            return "total " + total + " != " + ACCOUNTS * INITIAL + ": a partial transfer is visible; balances "
                    + Arrays.toString(balances) + ", oracle of " + p.acknowledged() + " acknowledged transfers "
                    + Arrays.toString(p.oracle()) + ", pending " + p;
        }
        for (long[] a : p.allowedStates()) {
            if (Arrays.equals(balances, a)) {
                return null;
            }
        }
        return "balances " + Arrays.toString(balances) + " are neither the " + p.acknowledged()
                + " acknowledged transfers " + Arrays.toString(p.oracle()) + " nor them plus a prefix of the pending "
                + p + " (an acknowledged transfer was lost or one applied twice)";
    }

    private Frontend open(Fabric backend, List<Fabric> mirrors) {
        AsymNvm nvm = AsymNvm.open(backend, mirrors, 0, options);
        try {
            return new Frontend(nvm, nvm.transactional(Accounts.class, new Accounts.Impl()),
                    nvm.transactional(Ledger.class, new Ledger.Impl()));
        } catch (RuntimeException e) {
            nvm.crash();
            throw e;
        }
    }

    private static void crashQuietly(Frontend f) {
        if (f != null) {
            try {
                f.nvm().crash();
            } catch (RuntimeException | SimulatedPowerFailure ignored) {
                // a dead frontend
            }
        }
    }

    private static void closeQuietly(BackendNode node) {
        if (node == null) {
            return;
        }
        try {
            node.close();
        } catch (SimulatedPowerFailure expected) {
            // the node died with the power; its threads are stopped
        }
    }

    private static void awaitOrFail(String what, BooleanSupplier condition) {
        if (!PowerFailureRig.awaitUntil(condition)) {
            throw new IllegalStateException("timed out waiting until " + what);
        }
    }
}
