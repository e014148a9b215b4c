package io.asymnvm.structures;

import io.asymnvm.backend.BackendConfiguration;
import io.asymnvm.backend.BackendNode;
import io.asymnvm.frontend.AsymNvm;
import io.asymnvm.frontend.FrontendOptions;
import io.asymnvm.frontend.PersistentTransaction;
import io.asymnvm.structures.codec.Codecs;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Structures opened by name (root directory + catalog), across reopen and frontend recovery. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class NamedStructuresTest {

    @TempDir
    Path dir;

    /** Operations on one named B+tree and one named hash map. */
    public interface Store {
        @PersistentTransaction
        void put(long key, String value);

        @PersistentTransaction
        void move(long key);

        @PersistentTransaction(readOnly = true)
        String tree(long key);

        @PersistentTransaction(readOnly = true)
        String hash(long key);
    }

    static final class StoreImpl implements Store {
        private final PersistentBTree<Long, String> tree;
        private final PersistentHashMap<Long, String> hash;

        StoreImpl(AsymNvm nvm) {
            this.tree = PersistentBTree.open(nvm, "events", Codecs.LONG, Codecs.STRING);
            this.hash = PersistentHashMap.open(nvm, "sessions", Codecs.LONG, Codecs.STRING);
        }

        @Override
        public void put(long key, String value) {
            hash.put(key, value);
        }

        @Override
        public void move(long key) {
            String v = hash.remove(key);
            if (v != null) {
                tree.put(key, v);
            }
        }

        @Override
        public String tree(long key) {
            return tree.get(key);
        }

        @Override
        public String hash(long key) {
            return hash.get(key);
        }
    }

    private BackendNode node() {
        return BackendNode.start(BackendConfiguration.builder(dir.resolve("backend.pm")).size(256L << 20)
                .conclude());
    }

    @Test
    void shouldReopenNamedStructuresAndRecoverTheirTransactions() {
        try (BackendNode node = node()) {
            AsymNvm first = AsymNvm.open(node.localFabric(), 0,
                    FrontendOptions.builder().redoBatch(1 << 20, 1 << 20, 10_000_000).conclude());
            Store store = first.transactional(Store.class, new StoreImpl(first));
            for (long k = 0; k < 300; k++) {
                store.put(k, "v" + k);
            }
            for (long k = 0; k < 300; k += 3) {
                store.move(k);
            }
            first.crash(); // redo unapplied: the next incarnation re-executes everything

            try (AsymNvm second = AsymNvm.open(node.localFabric(), 0, FrontendOptions.defaults())) {
                Store again = second.transactional(Store.class, new StoreImpl(second));
                assertTrue(second.recover().transactions() > 0, "transactions re-executed");
                for (long k = 0; k < 300; k++) {
                    if (k % 3 == 0) {
                        assertEquals("v" + k, again.tree(k), "moved key " + k);
                        assertNull(again.hash(k), "moved key " + k + " left the hash map");
                    } else {
                        assertEquals("v" + k, again.hash(k), "key " + k);
                        assertNull(again.tree(k));
                    }
                }
                second.sync(); // applied: the backend's catalog now indexes both names
                IllegalArgumentException wrongType = assertThrows(IllegalArgumentException.class,
                        () -> PersistentHashMap.open(second, "events", Codecs.LONG, Codecs.STRING));
                assertTrue(wrongType.getMessage().contains("'events' is type " + StructureType.BTREE.id()),
                        wrongType.getMessage());
                assertThrows(IllegalArgumentException.class,
                        () -> PersistentBTree.open(second, "events", Codecs.STRING, Codecs.STRING));
                assertEquals(0, second.catalogLookup("events").owner());
            }
        }
    }

    /** Many puts in the transaction that creates the structure: it misses pages and runs again. */
    public interface Batch {
        @PersistentTransaction
        void putAll(long first, int count);

        @PersistentTransaction(readOnly = true)
        long sum(long first, int count);
    }

    static final class BatchImpl implements Batch {
        private final PersistentMap<Long, Long> map;

        BatchImpl(PersistentMap<Long, Long> map) {
            this.map = map;
        }

        @Override
        public void putAll(long first, int count) {
            for (long k = first; k < first + count; k++) {
                map.put(k, k * 3);
            }
        }

        @Override
        public long sum(long first, int count) {
            long s = 0;
            for (long k = first; k < first + count; k++) {
                s += map.get(k);
            }
            return s;
        }
    }

    @Test
    void shouldCreateANamedStructureInATransactionThatRunsSeveralTimes() {
        try (BackendNode node = node();
             AsymNvm nvm = AsymNvm.open(node.localFabric(), 0, FrontendOptions.defaults())) {
            Batch hash = nvm.transactional(Batch.class,
                    new BatchImpl(PersistentHashMap.open(nvm, "batch-hash", Codecs.LONG, Codecs.LONG)));
            long retriesBefore = nvm.stats().retries();
            hash.putAll(0, 400);
            assertTrue(nvm.stats().retries() > retriesBefore, "the creating transaction ran more than once");
            assertEquals(3L * 399 * 400 / 2, hash.sum(0, 400));
        }
    }
}
