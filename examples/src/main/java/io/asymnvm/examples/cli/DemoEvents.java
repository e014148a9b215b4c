package io.asymnvm.examples.cli;

import io.asymnvm.examples.events.Event;
import io.asymnvm.examples.events.EventIndex;
import io.asymnvm.examples.events.EventIndexImpl;
import io.asymnvm.frontend.AsymNvm;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Random;
import java.util.TreeMap;

/**
 * The event part of {@code asymnvm demo}: seeded events with increasing timestamps recorded in batches of
 * {@value #BATCH} (one transaction each) in the B+tree {@value #NAME}, plus one batch that reuses a taken
 * timestamp and must be refused as a whole; then, after the reopen, the count, every event of this run (paged
 * newest first) and {@value #QUERIES} random range queries with limits checked against an oracle
 * {@link TreeMap}. An existing index (demo {@code --dir}) is continued after its newest event.
 */
final class DemoEvents {
    static final String NAME = "demo-events";
    static final int BATCH = 100;
    static final int QUERIES = 20;
    /** The first timestamp of a new index (microseconds since the epoch, fixed: the demo reads no clock). */
    static final long FIRST_TIMESTAMP = 1_767_225_600_000_000L;
    private static final String[] KINDS = {"login", "logout", "purchase", "refund", "error", "search"};
    private static final int PAGE = 1000;

    private final int count;
    private final Random random;
    private final TreeMap<Long, String> oracle = new TreeMap<>();
    private final List<String> surprises = new ArrayList<>();
    private EventIndex index;
    private long before;
    private long transactions;
    private long refused;
    private long nanos;

    DemoEvents(int count, long seed) {
        this.count = count;
        this.random = new Random(seed ^ 0x6576656E74730000L);
    }

    /** Registers the index with {@code nvm} (before its first transaction). */
    void attach(AsymNvm nvm) {
        // recordEvents takes a List<Event>: its runtime classes must be on the frontend's argument allow-list
        nvm.allowArgumentClasses(Event.class, ArrayList.class);
        index = nvm.transactional(EventIndex.class, new EventIndexImpl(nvm, NAME));
    }

    void run() {
        before = index.count();
        List<Event> newest = index.latest(1);
        long timestamp = newest.isEmpty() ? FIRST_TIMESTAMP : newest.get(0).timestamp() + 1;
        long start = System.nanoTime();
        for (int from = 0; from < count; from += BATCH) {
            int n = Math.min(BATCH, count - from);
            long[] timestamps = new long[n];
            String[] texts = new String[n];
            for (int i = 0; i < n; i++) {
                timestamp += 1 + random.nextInt(1000);
                timestamps[i] = timestamp;
                texts[i] = "event " + (from + i) + ": " + KINDS[random.nextInt(KINDS.length)] + " by user "
                        + random.nextInt(1000);
            }
            if ((from / BATCH) % 2 == 0) {
                index.recordAll(timestamps, texts);
            } else {
                List<Event> events = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    events.add(new Event(timestamps[i], texts[i]));
                }
                index.recordEvents(events);
            }
            transactions++;
            for (int i = 0; i < n; i++) {
                oracle.put(timestamps[i], texts[i]);
            }
        }
        nanos = System.nanoTime() - start;
        if (!oracle.isEmpty()) {
            refuseTakenTimestamp(timestamp + 1);
        }
    }

    /** A batch of a new timestamp and a taken one must fail as a whole: the new one stays unrecorded. */
    private void refuseTakenTimestamp(long fresh) {
        long taken = oracle.firstKey() + (oracle.lastKey() - oracle.firstKey()) / 2;
        taken = oracle.ceilingKey(taken);
        try {
            index.recordAll(new long[] {fresh, taken}, new String[] {"never recorded", "duplicate"});
            surprises.add("a batch reusing timestamp " + taken + " was recorded");
        } catch (IllegalArgumentException e) {
            refused++;
        }
        if (index.at(fresh) != null) {
            surprises.add("the refused batch left its event at " + fresh);
        }
    }

    List<String> surprises() {
        return surprises;
    }

    String summary() {
        double seconds = nanos / 1e9;
        return String.format(Locale.ROOT, "events: %d recorded in B+tree '%s' (%d transactions, %.0f events/s), "
                + "%d batch with a taken timestamp refused", count, NAME, transactions,
                seconds > 0 ? count / seconds : 0.0, refused);
    }

    /** After the reopen (with {@link #attach} called on the new frontend): one line per difference. */
    List<String> verify() {
        List<String> mismatches = new ArrayList<>();
        long n = index.count();
        if (n != before + oracle.size()) {
            mismatches.add("count is " + n + ", oracle " + (before + oracle.size()));
        }
        if (oracle.isEmpty()) {
            return mismatches;
        }
        compare(pageAll(), oracle.descendingMap(), Integer.MAX_VALUE, "all events of this run", mismatches);
        long first = oracle.firstKey();
        long span = oracle.lastKey() - first + 1;
        for (int q = 0; q < QUERIES; q++) {
            long a = first + Math.floorMod(random.nextLong(), span);
            long b = first + Math.floorMod(random.nextLong(), span);
            long from = Math.min(a, b);
            long to = Math.max(a, b);
            int limit = 1 + random.nextInt(50);
            compare(index.between(from, to, limit), oracle.subMap(from, true, to, true).descendingMap(), limit,
                    "between(" + from + ", " + to + ", " + limit + ")", mismatches);
        }
        return mismatches;
    }

    /** This run's events, newest first, a page per transaction. */
    private List<Event> pageAll() {
        List<Event> all = new ArrayList<>();
        long to = oracle.lastKey();
        long from = oracle.firstKey();
        while (to >= from) {
            List<Event> page = index.between(from, to, PAGE);
            all.addAll(page);
            if (page.size() < PAGE) {
                break;
            }
            to = page.get(page.size() - 1).timestamp() - 1;
        }
        return all;
    }

    private static void compare(List<Event> got, NavigableMap<Long, String> want, int limit, String what,
                                List<String> mismatches) {
        int i = 0;
        for (Map.Entry<Long, String> e : want.entrySet()) {
            if (i == limit) {
                break;
            }
            if (i >= got.size()) {
                mismatches.add(what + ": " + got.size() + " events, oracle " + Math.min(limit, want.size()));
                return;
            }
            Event g = got.get(i);
            if (g.timestamp() != e.getKey() || !g.text().equals(e.getValue())) {
                mismatches.add(what + ": event " + i + " is " + g + ", oracle " + new Event(e.getKey(), e.getValue()));
                return;
            }
            i++;
        }
        if (got.size() != i) {
            mismatches.add(what + ": " + got.size() + " events, oracle " + i);
        }
    }

    String verifiedSummary() {
        return String.format(Locale.ROOT, "count %d, all %d events of this run newest first and %d range queries "
                + "match the oracle", before + oracle.size(), oracle.size(), QUERIES);
    }
}
