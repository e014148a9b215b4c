package io.asymnvm.examples.events;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.frontend.AsymNvm;
import io.asymnvm.testsupport.ShmTempDirFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(30)
class EventIndexTest {
    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    private static EventIndex index(AsymNvm nvm) {
        return nvm.transactional(EventIndex.class, new EventIndexImpl(nvm, "events"));
    }

    private static List<Event> expected(TreeMap<Long, String> oracle, long from, long to, int limit) {
        List<Event> out = new ArrayList<>();
        for (Map.Entry<Long, String> e : oracle.subMap(from, true, to, true).descendingMap().entrySet()) {
            if (out.size() == limit) {
                break;
            }
            out.add(new Event(e.getKey(), e.getValue()));
        }
        return out;
    }

    @Test
    void shouldAnswerRangeQueriesNewestFirstWithLimitsAcrossAReopen() {
        long seed = 1_000_003;
        Random random = new Random(seed);
        TreeMap<Long, String> oracle = new TreeMap<>();
        try (AsymNvm nvm = AsymNvm.embedded(dir)) {
            EventIndex events = index(nvm);
            assertTrue(events.latest(5).isEmpty());
            long t = -5_000; // negative timestamps order before positive ones
            for (int batch = 0; batch < 20; batch++) {
                long[] ts = new long[50];
                String[] texts = new String[50];
                for (int i = 0; i < 50; i++) {
                    t += 1 + random.nextInt(20);
                    ts[i] = t;
                    texts[i] = "event " + (batch * 50 + i);
                    oracle.put(ts[i], texts[i]);
                }
                events.recordAll(ts, texts);
            }
            events.record(t + 100, "single");
            oracle.put(t + 100, "single");
        }
        try (AsymNvm nvm = AsymNvm.embedded(dir)) {
            EventIndex events = index(nvm);
            assertEquals(oracle.size(), events.count());
            assertEquals(expected(oracle, Long.MIN_VALUE, Long.MAX_VALUE, 7), events.latest(7));
            assertEquals("single", events.latest(1).get(0).text());
            for (int q = 0; q < 50; q++) {
                long a = oracle.firstKey() - 10 + random.nextInt((int) (oracle.lastKey() - oracle.firstKey() + 20));
                long b = a + random.nextInt(400);
                int limit = 1 + random.nextInt(40);
                assertEquals(expected(oracle, a, b, limit), events.between(a, b, limit),
                        "seed=" + seed + " between(" + a + ", " + b + ", " + limit + ")");
            }
            long first = oracle.firstKey();
            List<Event> exact = events.between(first, first, 10);
            assertEquals(List.of(new Event(first, oracle.get(first))), exact, "bounds are inclusive");
            assertEquals(oracle.get(first), events.at(first));
            assertNull(events.at(first - 1));
        }
    }

    @Test
    void shouldRefuseTakenTimestampsAndBadQueriesWithoutChangingAnything() {
        try (AsymNvm nvm = AsymNvm.embedded(dir)) {
            EventIndex events = index(nvm);
            events.record(100, "a");
            events.record(200, "b");
            long commits = nvm.stats().commits();
            IllegalArgumentException taken = assertThrows(IllegalArgumentException.class,
                    () -> events.record(100, "again"));
            assertTrue(taken.getMessage().contains("timestamp 100"), taken.getMessage());
            assertThrows(IllegalArgumentException.class,
                    () -> events.recordAll(new long[] {150, 200}, new String[] {"new", "taken"}));
            assertThrows(IllegalArgumentException.class,
                    () -> events.recordAll(new long[] {300, 300}, new String[] {"x", "y"}));
            assertThrows(IllegalArgumentException.class,
                    () -> events.recordAll(new long[] {300}, new String[] {"x", "y"}));
            assertThrows(NullPointerException.class, () -> events.record(300, null));
            assertEquals(commits, nvm.stats().commits(), "refused calls commit nothing");
            assertNull(events.at(150), "the refused batch recorded nothing");
            assertEquals(2, events.count());
            assertEquals("a", events.at(100));
            assertThrows(IllegalArgumentException.class, () -> events.between(200, 100, 10));
            assertThrows(IllegalArgumentException.class, () -> events.between(100, 200, 0));
            assertThrows(IllegalArgumentException.class, () -> events.latest(EventIndex.MAX_LIMIT + 1));
        }
    }

    @Test
    void shouldRemoveTheOldestEventsBeforeATimestamp() {
        try (AsymNvm nvm = AsymNvm.embedded(dir)) {
            EventIndex events = index(nvm);
            long[] ts = new long[100];
            String[] texts = new String[100];
            for (int i = 0; i < 100; i++) {
                ts[i] = 10L * i;
                texts[i] = "e" + i;
            }
            events.recordAll(ts, texts);
            assertEquals(30, events.removeBefore(500, 30));
            assertEquals(20, events.removeBefore(500, 30), "only events below the timestamp");
            assertEquals(0, events.removeBefore(500, 30));
            assertEquals(50, events.count());
            assertNull(events.at(490));
            assertEquals("e50", events.at(500));
            assertEquals(new Event(500, "e50"), events.between(0, 500, 5).get(0));
        }
    }

    @Test
    void shouldRecordEventRecordsOnlyOnceTheirClassesAreAllowed() {
        try (AsymNvm nvm = AsymNvm.embedded(dir)) {
            EventIndex events = index(nvm);
            List<Event> batch = new ArrayList<>(List.of(new Event(1, "a"), new Event(2, "b")));
            AsymNvmException refused = assertThrows(AsymNvmException.class, () -> events.recordEvents(batch));
            assertEquals(ErrorCode.CLASS_NOT_REGISTERED, refused.errorCode(), refused.getMessage());
            assertTrue(refused.getMessage().contains("java.util.ArrayList"), refused.getMessage());
            assertEquals(0, events.count(), "refused before anything was logged");

            nvm.allowArgumentClasses(Event.class, ArrayList.class);
            events.recordEvents(batch);
            assertEquals(List.of(new Event(2, "b"), new Event(1, "a")), events.latest(5));
            assertThrows(AsymNvmException.class, () -> events.recordEvents(List.of(new Event(3, "c"))),
                    "an immutable list's class is not allowed");
        }
    }
}
