package io.asymnvm.examples.cli;

import io.asymnvm.examples.kv.KeyValueStore;
import io.asymnvm.examples.kv.KeyValueStoreImpl;
import io.asymnvm.examples.kv.StructureKind;
import io.asymnvm.frontend.AsymNvm;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Random;

/**
 * The key-value part of {@code asymnvm demo}: seeded random puts and deletes (one transaction each) on the hash
 * map {@value #NAME} over a key space of {@code ops / 2} keys, an oracle in DRAM following every acknowledged
 * one (and checking the previous value each returns), then, after the reopen, every key of the space and the
 * map's size checked against the oracle. An existing map (demo {@code --dir}) is continued: the oracle starts
 * from what the key space holds, and keys outside it only count towards the size.
 */
final class DemoKeyValues {
    static final String NAME = "demo-kv";
    /** One operation in this many is a delete. */
    static final int DELETE_ONE_IN = 10;
    private static final int READ_BATCH = 500;

    private final int ops;
    private final int keySpace;
    private final Random random;
    private final Map<String, String> oracle = new HashMap<>();
    private final List<String> surprises = new ArrayList<>();
    private KeyValueStore store;
    private long outside;
    private long puts;
    private long deletes;
    private long nanos;

    DemoKeyValues(int ops, long seed) {
        this.ops = ops;
        this.keySpace = Math.max(1, ops / 2);
        this.random = new Random(seed ^ 0x6B65792D76616C75L);
    }

    /** Registers the store with {@code nvm} (before its first transaction). */
    void attach(AsymNvm nvm) {
        store = nvm.transactional(KeyValueStore.class, new KeyValueStoreImpl(nvm, StructureKind.HASH, NAME));
    }

    static String key(int i) {
        return "demo-key-" + i;
    }

    /** Starts the oracle from the map's current contents, then runs the operations. */
    void run() {
        String[] values = readKeySpace();
        long present = 0;
        for (int i = 0; i < keySpace; i++) {
            oracle.put(key(i), values[i]);
            present += values[i] == null ? 0 : 1;
        }
        outside = store.size() - present;
        long start = System.nanoTime();
        for (int t = 0; t < ops; t++) {
            String key = key(random.nextInt(keySpace));
            String expectedPrevious = oracle.get(key);
            String previous;
            if (random.nextInt(DELETE_ONE_IN) == 0) {
                previous = store.delete(key);
                oracle.put(key, null);
                deletes++;
            } else {
                String value = "value-" + t + "-" + Integer.toHexString(random.nextInt());
                previous = store.put(key, value);
                oracle.put(key, value);
                puts++;
            }
            if (!Objects.equals(previous, expectedPrevious)) {
                surprises.add("operation " + t + " on " + key + " returned previous value " + previous
                        + ", oracle " + expectedPrevious);
            }
        }
        nanos = System.nanoTime() - start;
    }

    private String[] readKeySpace() {
        String[] values = new String[keySpace];
        for (int from = 0; from < keySpace; from += READ_BATCH) {
            String[] keys = new String[Math.min(READ_BATCH, keySpace - from)];
            for (int i = 0; i < keys.length; i++) {
                keys[i] = key(from + i);
            }
            System.arraycopy(store.getAll(keys), 0, values, from, keys.length);
        }
        return values;
    }

    List<String> surprises() {
        return surprises;
    }

    String summary() {
        double seconds = nanos / 1e9;
        return String.format(Locale.ROOT, "key-values: %d operations on hash map '%s' (%d puts, %d deletes) over %d "
                + "keys, %.0f commits/s", ops, NAME, puts, deletes, keySpace, seconds > 0 ? ops / seconds : 0.0);
    }

    /** After the reopen (with {@link #attach} called on the new frontend): one line per difference. */
    List<String> verify() {
        List<String> mismatches = new ArrayList<>();
        String[] values = readKeySpace();
        long present = 0;
        for (int i = 0; i < keySpace; i++) {
            String want = oracle.get(key(i));
            present += want == null ? 0 : 1;
            if (!Objects.equals(want, values[i])) {
                mismatches.add(key(i) + " holds " + values[i] + ", oracle " + want);
            }
        }
        long size = store.size();
        if (size != present + outside) {
            mismatches.add("size is " + size + ", oracle " + (present + outside));
        }
        return mismatches;
    }

    String verifiedSummary() {
        long present = oracle.values().stream().filter(Objects::nonNull).count();
        return String.format(Locale.ROOT, "all %d keys match the oracle, %d present, size %d", keySpace, present,
                present + outside);
    }
}
