package io.asymnvm.examples.tatp;

import io.asymnvm.frontend.AsymNvm;
import io.asymnvm.testsupport.ShmTempDirFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * TATP on an embedded frontend: the population's row counts against the specification's ranges and the
 * regenerated rows, and each of the seven transactions' effects, found-nothing cases and rollbacks.
 */
@Timeout(60)
class TatpTest {
    private static final long SEED = 7;
    private static final long SUBSCRIBERS = 150;

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    private static Tatp tatp(AsymNvm nvm) {
        return nvm.transactional(Tatp.class, new TatpImpl(nvm));
    }

    private static TatpPopulation row(long sId) {
        return TatpPopulation.of(sId, SEED);
    }

    @Test
    void shouldPopulateTheSpecifiedRowsPerSubscriber() {
        try (AsymNvm nvm = AsymNvm.embedded(dir)) {
            Tatp tatp = tatp(nvm);
            long rows = TatpBench.populate(tatp, SUBSCRIBERS, SEED);
            long ai = 0;
            long sf = 0;
            long cf = 0;
            for (long s = 1; s <= SUBSCRIBERS; s++) {
                TatpPopulation p = row(s);
                assertTrue(p.accessInfo().size() >= 1 && p.accessInfo().size() <= 4, "access info of " + s);
                assertTrue(p.specialFacilities().size() >= 1 && p.specialFacilities().size() <= 4, "sf of " + s);
                assertTrue(p.callForwardings().size() <= 3 * p.specialFacilities().size(), "cf of " + s);
                ai += p.accessInfo().size();
                sf += p.specialFacilities().size();
                cf += p.callForwardings().size();
            }
            TatpCounts counts = tatp.counts();
            assertEquals(new TatpCounts(SUBSCRIBERS, SUBSCRIBERS, ai, sf, cf), counts);
            assertEquals(2 * SUBSCRIBERS + ai + sf + cf, rows);
            assertTrue(ai > SUBSCRIBERS && cf > 0, "the draws vary: " + counts);
            assertEquals(0, TatpBench.populate(tatp, SUBSCRIBERS, SEED), "existing subscribers are kept");
            for (long s : new long[] {1, 77, SUBSCRIBERS}) {
                assertEquals(row(s).subscriber(), tatp.getSubscriberData(s));
                assertEquals(TatpKeys.subNbr(s), tatp.getSubscriberData(s).subNbr());
                assertEquals(15, tatp.getSubscriberData(s).subNbr().length());
            }
        }
        try (AsymNvm nvm = AsymNvm.embedded(dir)) {
            assertEquals(SUBSCRIBERS, tatp(nvm).counts().subscribers(), "after a reopen");
        }
    }

    @Test
    void shouldReadSubscribersAccessInfoAndNewDestinationsAsTheSpecificationSelects() {
        try (AsymNvm nvm = AsymNvm.embedded(dir)) {
            Tatp tatp = tatp(nvm);
            TatpBench.populate(tatp, 40, SEED);
            assertNull(tatp.getSubscriberData(41), "no such subscriber");
            int destinations = 0;
            for (long s = 1; s <= 40; s++) {
                TatpPopulation p = row(s);
                Map<Long, AccessInfoRow> ai = toMap(p.accessInfo());
                for (int type = 1; type <= 4; type++) {
                    assertEquals(ai.get(TatpKeys.accessInfo(s, type)), tatp.getAccessData(s, type),
                            "access info " + s + "/" + type);
                }
                for (int sfType = 1; sfType <= 4; sfType++) {
                    for (int start : TatpKeys.START_TIMES) {
                        for (int end = 1; end <= 24; end += 5) {
                            List<String> expected = newDestination(p, sfType, start, end);
                            assertEquals(expected, tatp.getNewDestination(s, sfType, start, end),
                                    "subscriber " + s + " sf " + sfType + " start " + start + " end " + end);
                            destinations += expected.size();
                        }
                    }
                }
            }
            assertTrue(destinations > 0, "some lookups find a destination");
            assertThrows(IllegalArgumentException.class, () -> tatp.getAccessData(1, 5));
            assertThrows(IllegalArgumentException.class, () -> tatp.getNewDestination(1, 1, 4, 10));
        }
    }

    /** The specification's query, evaluated over the generated rows. */
    private static List<String> newDestination(TatpPopulation p, int sfType, int start, int end) {
        List<String> out = new ArrayList<>();
        SpecialFacilityRow sf = toMap(p.specialFacilities()).get(TatpKeys.specialFacility(p.sId(), sfType));
        if (sf == null || !sf.active()) {
            return out;
        }
        Map<Long, CallForwardingRow> cf = toMap(p.callForwardings());
        for (int cfStart : TatpKeys.START_TIMES) {
            CallForwardingRow row = cf.get(TatpKeys.callForwarding(p.sId(), sfType, cfStart));
            if (row != null && cfStart <= start && end < row.endTime()) {
                out.add(row.numberx());
            }
        }
        return out;
    }

    private static <V> Map<Long, V> toMap(List<Map.Entry<Long, V>> entries) {
        Map<Long, V> m = new java.util.HashMap<>();
        entries.forEach(e -> m.put(e.getKey(), e.getValue()));
        return m;
    }

    @Test
    void shouldUpdateSubscriberDataOrRollBackBothUpdates() {
        try (AsymNvm nvm = AsymNvm.embedded(dir)) {
            Tatp tatp = tatp(nvm);
            TatpBench.populate(tatp, 30, SEED);
            long s = findSubscriberWithAFreeForwardingAndAnAbsentFacility(tatp);
            TatpPopulation p = row(s);
            int present = typeOf(p.specialFacilities().get(0).getKey());
            int absent = absentType(p);
            int bit = 1 - tatp.getSubscriberData(s).bit1();
            tatp.updateSubscriberData(s, bit, present, 201);
            assertEquals(bit, tatp.getSubscriberData(s).bit1());
            assertEquals(201, tatp.specialFacility(s, present).dataA());
            assertEquals(p.subscriber().bits() >>> 1, tatp.getSubscriberData(s).bits() >>> 1,
                    "bits 2..10 unchanged");

            long commits = nvm.stats().commits();
            assertThrows(TatpRollbackException.class, () -> tatp.updateSubscriberData(s, 1 - bit, absent, 9));
            assertEquals(bit, tatp.getSubscriberData(s).bit1(), "bit_1 rolled back with the missing facility");
            assertNull(tatp.specialFacility(s, absent));
            assertEquals(commits, nvm.stats().commits(), "a rollback commits nothing");
            assertThrows(TatpRollbackException.class, () -> tatp.updateSubscriberData(31, 0, 1, 1));
            assertThrows(IllegalArgumentException.class, () -> tatp.updateSubscriberData(s, 2, present, 1));
        }
    }

    @Test
    void shouldUpdateTheLocationFoundThroughTheSubscriberNumber() {
        try (AsymNvm nvm = AsymNvm.embedded(dir)) {
            Tatp tatp = tatp(nvm);
            TatpBench.populate(tatp, 20, SEED);
            tatp.updateLocation(TatpKeys.subNbr(12), 123_456_789);
            assertEquals(123_456_789, tatp.getSubscriberData(12).vlrLocation());
            assertEquals(row(12).subscriber().mscLocation(), tatp.getSubscriberData(12).mscLocation());
            assertEquals(row(11).subscriber(), tatp.getSubscriberData(11), "other subscribers unchanged");
            assertThrows(TatpRollbackException.class, () -> tatp.updateLocation(TatpKeys.subNbr(21), 5));
        }
    }

    @Test
    void shouldInsertAndDeleteCallForwardingsUnderTheirConstraints() {
        try (AsymNvm nvm = AsymNvm.embedded(dir)) {
            Tatp tatp = tatp(nvm);
            TatpBench.populate(tatp, 30, SEED);
            long s = findSubscriberWithAFreeForwardingAndAnAbsentFacility(tatp);
            TatpPopulation p = row(s);
            String nbr = TatpKeys.subNbr(s);
            int sfType = typeOf(p.specialFacilities().get(0).getKey());
            int start = freeStart(p, sfType);
            long before = tatp.counts().callForwardings();

            tatp.insertCallForwarding(nbr, sfType, start, start + 3, "123456789012345");
            assertEquals(new CallForwardingRow(start + 3, "123456789012345"), tatp.callForwarding(s, sfType, start));
            assertEquals(before + 1, tatp.counts().callForwardings());

            TatpRollbackException exists = assertThrows(TatpRollbackException.class,
                    () -> tatp.insertCallForwarding(nbr, sfType, start, 24, "999999999999999"));
            assertTrue(exists.getMessage().contains("exists"), exists.getMessage());
            assertEquals("123456789012345", tatp.callForwarding(s, sfType, start).numberx(), "row kept");

            int absent = absentType(p);
            assertThrows(TatpRollbackException.class,
                    () -> tatp.insertCallForwarding(nbr, absent, 0, 5, "111111111111111"));
            assertNull(tatp.callForwarding(s, absent, 0), "no forwarding without its special facility");
            assertThrows(TatpRollbackException.class,
                    () -> tatp.insertCallForwarding(TatpKeys.subNbr(31), 1, 0, 5, "111111111111111"));

            tatp.deleteCallForwarding(nbr, sfType, start);
            assertNull(tatp.callForwarding(s, sfType, start));
            assertEquals(before, tatp.counts().callForwardings());
            assertThrows(TatpRollbackException.class, () -> tatp.deleteCallForwarding(nbr, sfType, start),
                    "nothing left to delete");
            assertThrows(IllegalArgumentException.class, () -> tatp.deleteCallForwarding(nbr, sfType, 3));
        }
    }

    @Test
    void shouldDrawSubscriberIdsNonUniformlyWithinThePopulation() {
        long p = 1000;
        long a = TatpMix.nonUniformConstant(p);
        assertEquals(65_535, a);
        assertEquals(1_048_575, TatpMix.nonUniformConstant(2_000_000));
        assertEquals(2_097_151, TatpMix.nonUniformConstant(20_000_000));
        SplittableRandom r = new SplittableRandom(3);
        long[] hits = new long[(int) p + 1];
        int draws = 200_000;
        for (int i = 0; i < draws; i++) {
            long s = TatpMix.nonUniformSubscriber(r, p, a);
            assertTrue(s >= 1 && s <= p, "drawn " + s);
            hits[(int) s]++;
        }
        long max = 0;
        long min = Long.MAX_VALUE;
        for (int s = 1; s <= p; s++) {
            max = Math.max(max, hits[s]);
            min = Math.min(min, hits[s]);
        }
        // uniform draws would put about 200 on each id; the OR skews them several-fold
        assertTrue(max > 3 * min, "max " + max + " min " + min);
        assertNotEquals(0, min, "every id is reachable");
    }

    private static int typeOf(long specialFacilityKey) {
        return (int) (specialFacilityKey & 3) + 1;
    }

    /** A special-facility type the subscriber lacks, or 0 when it has all four. */
    private static int absentType(TatpPopulation p) {
        Map<Long, SpecialFacilityRow> sf = toMap(p.specialFacilities());
        for (int t = 1; t <= 4; t++) {
            if (!sf.containsKey(TatpKeys.specialFacility(p.sId(), t))) {
                return t;
            }
        }
        return 0;
    }

    private static int freeStart(TatpPopulation p, int sfType) {
        Map<Long, CallForwardingRow> cf = toMap(p.callForwardings());
        for (int start : TatpKeys.START_TIMES) {
            if (!cf.containsKey(TatpKeys.callForwarding(p.sId(), sfType, start))) {
                return start;
            }
        }
        return -1;
    }

    private static long findSubscriberWithAFreeForwardingAndAnAbsentFacility(Tatp tatp) {
        for (long s = 1; s <= 30; s++) {
            TatpPopulation p = row(s);
            if (absentType(p) > 0 && freeStart(p, typeOf(p.specialFacilities().get(0).getKey())) >= 0) {
                assertFalse(p.specialFacilities().isEmpty());
                return s;
            }
        }
        throw new AssertionError("no subscriber among 30 has a free forwarding and an absent facility (seed "
                + SEED + ")");
    }
}
