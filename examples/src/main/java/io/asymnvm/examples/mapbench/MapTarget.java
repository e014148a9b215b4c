package io.asymnvm.examples.mapbench;

import io.asymnvm.examples.kv.KeyValueStore;
import io.asymnvm.examples.kv.StructureKind;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;

/**
 * What {@link MapBenchDriver} runs against: a persistent structure behind a {@link KeyValueStore} proxy, or the
 * volatile baseline of the same kind. Thread-safe.
 */
interface MapTarget {
    /** For reports, e.g. "hash map" or "ConcurrentHashMap". */
    String name();

    String read(String key);

    void update(String key, String value);

    /** Inserts a batch (one transaction for a persistent target). */
    void insertAll(String[] keys, String[] values);

    /** A persistent structure: every call is a persistent transaction of the store. */
    static MapTarget persistent(StructureKind kind, KeyValueStore store) {
        return new MapTarget() {
            @Override
            public String name() {
                return kind.displayName();
            }

            @Override
            public String read(String key) {
                return store.get(key);
            }

            @Override
            public void update(String key, String value) {
                store.put(key, value);
            }

            @Override
            public void insertAll(String[] keys, String[] values) {
                store.putAll(keys, values);
            }
        };
    }

    /**
     * The volatile baseline of {@code kind}: a {@link TreeMap} under one lock for the B+tree (the simplest ordered
     * map threads can share, and like the frontend one writer at a time), a {@link ConcurrentHashMap} for the hash
     * map.
     */
    static MapTarget baseline(StructureKind kind) {
        return kind == StructureKind.BTREE ? new LockedTreeMap() : new ConcurrentMapTarget();
    }

    /** TreeMap under a lock. */
    final class LockedTreeMap implements MapTarget {
        private final ReentrantLock lock = new ReentrantLock();
        private final TreeMap<String, String> map = new TreeMap<>();

        @Override
        public String name() {
            return "TreeMap+lock";
        }

        @Override
        public String read(String key) {
            lock.lock();
            try {
                return map.get(key);
            } finally {
                lock.unlock();
            }
        }

        @Override
        public void update(String key, String value) {
            lock.lock();
            try {
                map.put(key, value);
            } finally {
                lock.unlock();
            }
        }

        @Override
        public void insertAll(String[] keys, String[] values) {
            lock.lock();
            try {
                for (int i = 0; i < keys.length; i++) {
                    map.put(keys[i], values[i]);
                }
            } finally {
                lock.unlock();
            }
        }
    }

    /** ConcurrentHashMap. */
    final class ConcurrentMapTarget implements MapTarget {
        private final Map<String, String> map = new ConcurrentHashMap<>();

        @Override
        public String name() {
            return "ConcurrentHashMap";
        }

        @Override
        public String read(String key) {
            return map.get(key);
        }

        @Override
        public void update(String key, String value) {
            map.put(key, value);
        }

        @Override
        public void insertAll(String[] keys, String[] values) {
            for (int i = 0; i < keys.length; i++) {
                map.put(keys[i], values[i]);
            }
        }
    }
}
