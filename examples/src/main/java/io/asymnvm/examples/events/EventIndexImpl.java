package io.asymnvm.examples.events;

import io.asymnvm.frontend.AsymNvm;
import io.asymnvm.structures.PersistentBTree;
import io.asymnvm.structures.codec.Codecs;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * {@link EventIndex} on a {@code PersistentBTree<Long, String>} opened by name ({@link Codecs#LONG} keys order
 * numerically, negative timestamps included). Queries are range scans of the B+tree: descending from {@code to},
 * stopping at {@code from} or after {@code limit} events, so a query reads O(height + limit) nodes. Deterministic;
 * every check runs before the first write.
 */
public final class EventIndexImpl implements EventIndex {
    private final PersistentBTree<Long, String> tree;

    public EventIndexImpl(AsymNvm nvm, String name) {
        this.tree = PersistentBTree.open(Objects.requireNonNull(nvm, "nvm"), name, Codecs.LONG, Codecs.STRING);
    }

    @Override
    public void record(long timestamp, String text) {
        Objects.requireNonNull(text, "text");
        String existing = tree.putIfAbsent(timestamp, text);
        if (existing != null) {
            throw taken(timestamp, existing);
        }
    }

    @Override
    public void recordAll(long[] timestamps, String[] texts) {
        Objects.requireNonNull(timestamps, "timestamps");
        Objects.requireNonNull(texts, "texts");
        if (timestamps.length != texts.length) {
            throw new IllegalArgumentException(timestamps.length + " timestamps but " + texts.length + " texts");
        }
        Set<Long> seen = new HashSet<>();
        for (int i = 0; i < timestamps.length; i++) {
            Objects.requireNonNull(texts[i], "text");
            if (!seen.add(timestamps[i])) {
                throw new IllegalArgumentException("timestamp " + timestamps[i] + " repeated in the batch");
            }
        }
        // putIfAbsent writes nothing when the key exists, and an exception aborts the whole transaction
        for (int i = 0; i < timestamps.length; i++) {
            String existing = tree.putIfAbsent(timestamps[i], texts[i]);
            if (existing != null) {
                throw taken(timestamps[i], existing);
            }
        }
    }

    @Override
    public void recordEvents(List<Event> events) {
        Objects.requireNonNull(events, "events");
        long[] timestamps = new long[events.size()];
        String[] texts = new String[events.size()];
        for (int i = 0; i < timestamps.length; i++) {
            timestamps[i] = events.get(i).timestamp();
            texts[i] = events.get(i).text();
        }
        recordAll(timestamps, texts);
    }

    @Override
    public List<Event> between(long from, long to, int limit) {
        if (from > to) {
            throw new IllegalArgumentException("empty time range: from " + from + " > to " + to);
        }
        return query(from, to, limit);
    }

    @Override
    public List<Event> latest(int limit) {
        return query(null, null, limit);
    }

    private List<Event> query(Long from, Long to, int limit) {
        checkLimit(limit);
        List<Event> events = new ArrayList<>(Math.min(limit, 64));
        for (Map.Entry<Long, String> e : tree.range(from, true, to, true, true, limit)) {
            events.add(new Event(e.getKey(), e.getValue()));
        }
        return events;
    }

    @Override
    public String at(long timestamp) {
        return tree.get(timestamp);
    }

    @Override
    public long count() {
        return tree.size();
    }

    @Override
    public int removeBefore(long timestamp, int max) {
        checkLimit(max);
        List<Map.Entry<Long, String>> old = tree.range(null, true, timestamp, false, false, max);
        for (Map.Entry<Long, String> e : old) {
            tree.remove(e.getKey());
        }
        return old.size();
    }

    private static void checkLimit(int limit) {
        if (limit < 1 || limit > MAX_LIMIT) {
            throw new IllegalArgumentException("limit " + limit + " outside [1, " + MAX_LIMIT + "]");
        }
    }

    private static IllegalArgumentException taken(long timestamp, String existing) {
        String shown = existing.length() > 40 ? existing.substring(0, 40) + "..." : existing;
        return new IllegalArgumentException("an event is already recorded at timestamp " + timestamp + " (\""
                + shown + "\")");
    }
}
