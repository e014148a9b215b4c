package io.asymnvm.system;

import io.asymnvm.system.MirrorPowerFailureRig.Family;
import io.asymnvm.system.MirrorPowerFailureRig.Outcome;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Replication under simulated power failure (issue 9, item 8), with {@link MirrorPowerFailureRig}: a backend and
 * a SYNC mirror on simulated PM, the power cut at sampled persist points of the backend's region, the mirror's, or
 * both at once, while the redo is shipped, while the mirror catches up, and while it is promoted. For each family
 * a dry run counts the persist calls P of the counted region, then the identical workload is rerun with the power
 * cut at points sampled over [0, P) (evenly spread plus random ones) and checked: the backend lost for good, the
 * mirror promoted (or refusing with REPLICA_BEHIND while it may miss acknowledged transfers), a new frontend
 * incarnation recovers on it and must see every acknowledged transfer and no partial one; or, when only the
 * mirror died, the backend keeps every acknowledged transfer and nothing is acknowledged without the mirror; or,
 * when the mirror died and then the backend was lost for good, the mirror restarted from its crash image comes back
 * in sync if its persisted mark was durable ({@code MirrorStateLayout}), is promoted and must hold every
 * acknowledged transfer, and refuses promotion with {@code REPLICA_BEHIND} otherwise.
 *
 * <p>Each violation names seed, family, crash point, image seed and where the power failed, so that it can be
 * replayed ({@code -Dasymnvm.seed=S -Dasymnvm.mirrorCrashBudget=N}). At least 1,000 crash states by default;
 * 10,000 in the {@code slow} variant. The counts are printed per family and outcome.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class MirrorPowerFailureTest {
    private static final long SEED = Long.getLong("asymnvm.seed", 20261124L);
    private static final int TRANSFERS = 30;

    @TempDir
    Path dir;

    /** Threads of a node or frontend that die with the power are expected: counted, not printed. */
    @RegisterExtension
    final DyingThreads dyingThreads = new DyingThreads();

    /** Every family but the late join, which {@link #lateJoinOfAMirrorTheFrontendAlreadyUses} explores. */
    private static final List<Family> PASSING = List.of(Family.SHIPPING_BACKEND, Family.SHIPPING_MIRROR,
            Family.SHIPPING_BOTH, Family.CATCH_UP_BACKEND, Family.CATCH_UP_MIRROR, Family.CATCH_UP_BOTH,
            Family.PROMOTION_MIRROR, Family.SHIPPING_MIRROR_THEN_BACKEND, Family.CATCH_UP_MIRROR_THEN_BACKEND,
            Family.REATTACH_MIRROR_THEN_BACKEND);

    @Test
    void shouldLoseNoAcknowledgedTransferWhenPowerFailsDuringReplication() {
        Exploration e = explore(Integer.getInteger("asymnvm.mirrorStates", 1_000), "default", PASSING);
        // the families reach the outcomes they exist for
        assertTrue(e.count(Family.SHIPPING_BACKEND, Outcome.PROMOTED) > 0, "no promotion after a backend cut");
        assertTrue(e.count(Family.SHIPPING_MIRROR, Outcome.BACKEND_SERVED) > 0, "no backend served after a mirror cut");
        assertTrue(e.count(Family.CATCH_UP_BACKEND, Outcome.PROMOTED) > 0, "no promotion after catch-up");
        assertTrue(e.count(Family.PROMOTION_MIRROR, Outcome.RESTARTED_PROMOTED) > 0,
                "no promoted mirror restarted after a cut");
        // a mirror that lost power keeps its promotability (MirrorStateLayout): in sync before the cut while
        // shipping, its persisted mark was durable, so every restart must come back in sync and be promoted
        assertTrue(e.count(Family.SHIPPING_MIRROR_THEN_BACKEND, Outcome.PROMOTED_AFTER_RESTART) > 0,
                "no mirror promoted after it lost power while in sync");
        assertEquals(0, e.count(Family.SHIPPING_MIRROR_THEN_BACKEND, Outcome.REFUSED_AFTER_RESTART),
                "a mirror in sync before its power was cut restarted catching up");
        assertTrue(e.count(Family.SHIPPING_BOTH, Outcome.PROMOTED_AFTER_RESTART) > 0,
                "no mirror promoted after both nodes lost power while shipping");
        assertTrue(e.count(Family.CATCH_UP_MIRROR_THEN_BACKEND, Outcome.PROMOTED_AFTER_RESTART)
                + e.count(Family.CATCH_UP_MIRROR_THEN_BACKEND, Outcome.REFUSED_AFTER_RESTART) > 0,
                "no restart after a cut during catch-up");
        // a cut during a second copy of an in-sync mirror: refused while the copy runs, promoted once in sync again
        assertTrue(e.count(Family.REATTACH_MIRROR_THEN_BACKEND, Outcome.REFUSED_AFTER_RESTART) > 0,
                "no restart refused after a cut during a second image copy");
        assertTrue(e.count(Family.REATTACH_MIRROR_THEN_BACKEND, Outcome.PROMOTED_AFTER_RESTART) > 0,
                "no restart promoted after a cut during or after a second image copy");
    }

    @Test
    @Tag("slow")
    @Timeout(value = 3600, unit = TimeUnit.SECONDS)
    void shouldLoseNoAcknowledgedTransferInTenThousandReplicationPowerFailures() {
        explore(10_000, "slow", PASSING);
    }

    /**
     * The frontend commits with the mirror as SYNC mirror from its start, and the backend starts shipping to the
     * mirror (image copy, catch-up) only after a quarter of the transfers, which is also what a shipper that
     * re-attaches does (a new copy while frontends keep committing). Power cut at the backend's persist points.
     *
     * <p>Root cause of the failures this test found (seed 20261124: 4-5 of 140 crash states, e.g. crash point 47,
     * "re-execution of tx 5 ... heap range [-634, -626) outside the heap", or "the accounts are gone"): when the
     * backend lost power while the shipper was starting its image copy, the rig closed the backend, which closes
     * the shipper; its copy loop stopped at {@code running == false} but the shipper still sent COPY_DONE, so the
     * mirror adopted the copy's checkpoints over a heap of which none (or only a part) had been written, reported
     * itself in sync and was promoted with a zero root word. The shipper now refuses to send COPY_DONE unless every
     * chunk was written while it ran ({@code MirrorShipper#requireRunning}); such a mirror stays catching up and
     * refuses promotion with REPLICA_BEHIND.
     */
    @Test
    void lateJoinOfAMirrorTheFrontendAlreadyUses() {
        explore(Integer.getInteger("asymnvm.lateJoinStates", 140), "late join", List.of(Family.LATE_JOIN_BACKEND));
    }

    @Test
    @Tag("slow")
    @Timeout(value = 3600, unit = TimeUnit.SECONDS)
    void lateJoinOfAMirrorTheFrontendAlreadyUsesInFourteenHundredPowerFailures() {
        explore(1_400, "late join, slow", List.of(Family.LATE_JOIN_BACKEND));
    }

    private static final List<Family> LATE_ADD = List.of(Family.LATE_ADD_BACKEND,
            Family.LATE_ADD_MIRROR_THEN_BACKEND, Family.LATE_ADD_BOTH);

    /**
     * A running frontend adds the mirror ({@code AsymNvm.addMirror}: re-post of its retained records, FLUSH,
     * MIRROR_POSTING) while the backend copies its image to it, and the power is cut in the backend, the mirror
     * or both; the backend is then lost for good. The mirror is promoted only if it claims in sync (live, or
     * restarted from its crash image with a durable in-sync mark) and must then hold every acknowledged transfer
     * and no partial one; otherwise it must refuse with REPLICA_BEHIND.
     */
    @Test
    void powerCutWhileARunningFrontendAddsTheMirror() {
        Exploration e = explore(Integer.getInteger("asymnvm.lateAddStates", 120), "late add", LATE_ADD);
        // most cuts fall before the mirror is in sync (refusals); some after, where it must be promoted
        assertTrue(e.count(Family.LATE_ADD_BACKEND, Outcome.PROMOTED) > 0,
                "no mirror promoted after the backend lost power once the add was done");
        assertTrue(e.count(Family.LATE_ADD_MIRROR_THEN_BACKEND, Outcome.PROMOTED_AFTER_RESTART)
                + e.count(Family.LATE_ADD_BOTH, Outcome.PROMOTED_AFTER_RESTART) > 0,
                "no restarted mirror promoted after it lost power once the add was done");
    }

    @Test
    @Tag("slow")
    @Timeout(value = 3600, unit = TimeUnit.SECONDS)
    void powerCutWhileARunningFrontendAddsTheMirrorInFifteenHundredPowerFailures() {
        explore(1_500, "late add, slow", LATE_ADD);
    }

    private Exploration explore(int states, String profile, List<Family> families) {
        Exploration e = new Exploration();
        int perFamily = (states + families.size() - 1) / families.size();
        long seed = SEED;
        while (e.total() < states) {
            long before = e.total();
            MirrorPowerFailureRig rig = new MirrorPowerFailureRig(dir, seed, TRANSFERS);
            for (Family f : families) {
                int missing = (int) Math.max(0, perFamily - e.states(f));
                if (missing > 0) {
                    e.explore(rig, f, Integer.getInteger("asymnvm.mirrorCrashBudget", missing));
                }
            }
            seed += 7919;
            assertTrue(e.total() > before, "seed " + seed + " added no crash state");
        }
        e.report(profile);
        assertTrue(e.total() >= states, "explored only " + e.total() + " crash states");
        return e;
    }

    /** Counters and violations per family. */
    private final class Exploration {
        final List<String> violations = new ArrayList<>();
        final Map<Family, Map<Outcome, Long>> outcomes = new EnumMap<>(Family.class);
        final Map<Family, Long> powerLost = new EnumMap<>(Family.class);
        final Map<Family, Long> nanos = new EnumMap<>(Family.class);
        final List<String> dryRuns = new ArrayList<>();
        final long start = System.nanoTime();

        long states(Family f) {
            return outcomes.getOrDefault(f, Map.of()).values().stream().mapToLong(Long::longValue).sum();
        }

        long count(Family f, Outcome o) {
            return outcomes.getOrDefault(f, Map.of()).getOrDefault(o, 0L);
        }

        long total() {
            long n = 0;
            for (Family f : Family.values()) {
                n += states(f);
            }
            return n;
        }

        void explore(MirrorPowerFailureRig rig, Family family, int budget) {
            long began = System.nanoTime();
            try {
                exploreTimed(rig, family, budget);
            } finally {
                nanos.merge(family, System.nanoTime() - began, Long::sum);
            }
        }

        private void exploreTimed(MirrorPowerFailureRig rig, Family family, int budget) {
            long seed = rig.seed();
            MirrorPowerFailureRig.Run dry = rig.run(family, -1);
            assertNull(dry.unexpected(), "dry run (seed " + seed + ", " + family + ")");
            assertFalse(dry.powerLost(), "dry run (seed " + seed + ", " + family + ")");
            List<String> dryViolations = new ArrayList<>();
            Outcome clean = rig.check(dry, new Random(seed), "dry run seed " + seed + " " + family, dryViolations);
            assertEquals(List.of(), dryViolations, "dry run (seed " + seed + ", " + family + ")");
            assertTrue(clean != Outcome.VIOLATION, "dry run (seed " + seed + ", " + family + ")");
            long p = dry.persists();
            dryRuns.add("seed " + seed + " " + family + ": " + p + " persist points of the "
                    + (family.countsBackend() ? "backend" : "mirror") + "'s region, clean run " + clean);
            Random sampler = new Random(seed * 31 + family.ordinal());
            for (long k : PowerFailureTest.crashPoints(p, budget, sampler)) {
                MirrorPowerFailureRig.Run run = rig.run(family, k);
                if (run.powerLost()) {
                    powerLost.merge(family, 1L, Long::sum);
                }
                long imageSeed = seed + k * 1_000_003L + family.ordinal();
                String where = "seed " + seed + " family " + family + " crash point " + k + " (image seed "
                        + imageSeed + ", " + run.pending().acknowledged() + " acknowledged, pending "
                        + run.pending() + "; power cut in " + run.site() + ")";
                Outcome o = rig.check(run, new Random(imageSeed), where, violations);
                outcomes.computeIfAbsent(family, x -> new EnumMap<>(Outcome.class)).merge(o, 1L, Long::sum);
            }
        }

        void report(String profile) {
            long seconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start);
            System.out.printf("replication power-failure exploration (%s): %d crash states, %d violations, "
                    + "%d threads died with the power, %d s%n", profile, total(), violations.size(),
                    dyingThreads.count(), seconds);
            for (Family f : Family.values()) {
                if (states(f) == 0) {
                    continue;
                }
                System.out.printf("  %-17s %5d states (%d lost power, %.1f s): %s%n", f, states(f),
                        powerLost.getOrDefault(f, 0L), nanos.getOrDefault(f, 0L) / 1e9,
                        outcomes.getOrDefault(f, Map.of()));
            }
            dryRuns.forEach(d -> System.out.println("  dry run " + d));
            if (!violations.isEmpty()) {
                StringBuilder b = new StringBuilder(violations.size() + " invariant violations in " + total()
                        + " crash states:");
                violations.stream().limit(20).forEach(v -> b.append("\n  ").append(v));
                fail(b.toString());
            }
        }
    }
}
