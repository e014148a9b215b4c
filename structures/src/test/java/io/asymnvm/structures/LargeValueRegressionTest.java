package io.asymnvm.structures;

import io.asymnvm.frontend.AsymNvm;
import io.asymnvm.frontend.FrontendOptions;
import io.asymnvm.frontend.PersistentTransaction;
import io.asymnvm.structures.codec.Codecs;
import io.asymnvm.testsupport.ShmTempDirFactory;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.file.Path;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 7's first report, as a regression test: 2,000 puts of 1,100-byte values through the public API with
 * <em>default</em> options (read-ahead on) used to corrupt the heap at put ~1,464: a page miss read ahead into
 * the first page of a slab not yet granted to this frontend, the grant did not drop it, and the allocator then
 * wrote a block header over the new slab's header from the stale copy. Every value must read back, before and
 * after a reopen, and the run must cross many slab boundaries (or it proves nothing).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class LargeValueRegressionTest {
    static final int PUTS = 2_000;
    static final int VALUE_BYTES = 1_100;

    /** The user's interface: one put or get per transaction. */
    public interface Store {
        @PersistentTransaction
        void put(String key, byte[] value);

        @PersistentTransaction(readOnly = true)
        byte[] get(String key);
    }

    static final class StoreImpl implements Store {
        private final PersistentMap<String, byte[]> map;

        StoreImpl(AsymNvm nvm, StructureType type) {
            map = type == StructureType.BTREE
                    ? PersistentBTree.open(nvm, "usertable", Codecs.STRING, Codecs.BYTES)
                    : PersistentHashMap.open(nvm, "usertable", Codecs.STRING, Codecs.BYTES);
        }

        @Override
        public void put(String key, byte[] value) {
            map.put(key, value);
        }

        @Override
        public byte[] get(String key) {
            return map.get(key);
        }
    }

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("io.asymnvm.structures.MapLoadTest#cases") // every structure over every transport
    void shouldReadBackEveryLargeValueWithDefaultOptions(StructureType type, Nvm.Transport transport) {
        FrontendOptions defaults = FrontendOptions.defaults();
        byte[][] values = new byte[PUTS][];
        Random random = new Random(7);
        for (int i = 0; i < PUTS; i++) {
            values[i] = new byte[VALUE_BYTES];
            random.nextBytes(values[i]);
        }
        try (Nvm nvm = Nvm.start(dir, transport, defaults)) {
            Store store = nvm.nvm().transactional(Store.class, new StoreImpl(nvm.nvm(), type));
            for (int i = 0; i < PUTS; i++) {
                store.put("user" + i, values[i]);
            }
            for (int i = 0; i < PUTS; i++) {
                assertArrayEquals(values[i], store.get("user" + i), "user" + i);
            }
            long grants = nvm.nvm().stats().slabGrants();
            assertTrue(grants >= 2, "2,000 x 1,100 B must cross slab boundaries; slabs granted: " + grants);
            nvm.reopen();
            Store again = nvm.nvm().transactional(Store.class, new StoreImpl(nvm.nvm(), type));
            for (int i = 0; i < PUTS; i++) {
                assertArrayEquals(values[i], again.get("user" + i), "user" + i + " after reopen");
            }
        }
    }
}
