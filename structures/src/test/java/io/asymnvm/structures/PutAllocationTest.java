package io.asymnvm.structures;

import io.asymnvm.backend.BackendConfiguration;
import io.asymnvm.backend.BackendNode;
import io.asymnvm.frontend.AsymNvm;
import io.asymnvm.frontend.FrontendOptions;
import io.asymnvm.frontend.PersistentTransaction;
import io.asymnvm.structures.codec.Codecs;
import io.asymnvm.testsupport.ShmTempDirFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The bytes a put allocates on the calling thread stay bounded (issue 8): a put of a 1 KiB value that replaces one
 * of the same length, through a transactional proxy on the local fabric (so the backend's admission of the FLUSH
 * runs on this thread too), allocated about 18 KB before the argument, value and redo copies were removed and
 * about 14 KB after (mostly the attempt's private copy of the 4 KiB page holding the value's blob, which the cache
 * installs, and the semantic record the call logs). The bound sits between the two. Allocation counts depend on
 * how much the JIT has compiled (escape analysis removes short-lived objects), so the test warms up first and
 * passes at the first window of puts under the bound; it fails only if no window gets there.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class PutAllocationTest {
    private static final long PM_SIZE = 128L << 20;
    private static final int VALUE_SIZE = 1024;
    private static final int KEYS = 2_000;
    private static final int WARM_UP_PUTS = 40_000;
    private static final int WINDOW_PUTS = 2_000;
    private static final int MAX_WINDOWS = 100;
    private static final long BOUND_BYTES_PER_PUT = 16 * 1024;

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    /** Each call one transaction; returns the previous value's length (-1: none). */
    public interface BytesStore {
        @PersistentTransaction
        int put(String key, byte[] value);
    }

    static final class BytesStoreImpl implements BytesStore {
        private final PersistentMap<String, byte[]> map;

        BytesStoreImpl(AsymNvm nvm) {
            this.map = PersistentHashMap.open(nvm, "allocation", Codecs.STRING, Codecs.BYTES);
        }

        @Override
        public int put(String key, byte[] value) {
            byte[] old = map.put(key, value);
            return old == null ? -1 : old.length;
        }
    }

    @Test
    void shouldAllocateBoundedBytesPerPutOfAOneKibValue() {
        com.sun.management.ThreadMXBean threads =
                (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        assumeTrue(threads.isThreadAllocatedMemorySupported() && threads.isThreadAllocatedMemoryEnabled(),
                "thread allocation counting not available");
        Path pm = dir.resolve("backend.pm");
        try (BackendNode node = BackendNode.start(BackendConfiguration.builder(pm).size(PM_SIZE).maxFrontends(2)
                     .port(-1).conclude());
             AsymNvm nvm = AsymNvm.open(node.localFabric(), 0, FrontendOptions.builder()
                     .credentials(node.credentialsFile()).conclude())) {
            BytesStore store = nvm.transactional(BytesStore.class, new BytesStoreImpl(nvm));
            String[] keys = new String[KEYS];
            for (int i = 0; i < KEYS; i++) {
                keys[i] = "key-" + i;
            }
            byte[] value = new byte[VALUE_SIZE];
            SplittableRandom random = new SplittableRandom(42);
            random.nextBytes(value);
            for (int i = 0; i < WARM_UP_PUTS; i++) {
                put(store, keys, value, random, i);
            }
            long thread = Thread.currentThread().getId();
            double best = Double.MAX_VALUE;
            for (int w = 0; w < MAX_WINDOWS && best >= BOUND_BYTES_PER_PUT; w++) {
                long before = threads.getThreadAllocatedBytes(thread);
                for (int i = 0; i < WINDOW_PUTS; i++) {
                    put(store, keys, value, random, i);
                }
                best = Math.min(best, (threads.getThreadAllocatedBytes(thread) - before) / (double) WINDOW_PUTS);
            }
            System.out.printf("put of a %d-byte value: %.0f bytes allocated on the calling thread (best window)%n",
                    VALUE_SIZE, best);
            assertTrue(best < BOUND_BYTES_PER_PUT, "a put of a " + VALUE_SIZE + "-byte value allocated at least "
                    + Math.round(best) + " bytes on the calling thread in every window, bound "
                    + BOUND_BYTES_PER_PUT);
        }
    }

    private static void put(BytesStore store, String[] keys, byte[] value, SplittableRandom random, int i) {
        value[0] = (byte) i; // no two consecutive puts write the same bytes
        value[1] = (byte) (i >>> 8);
        store.put(keys[random.nextInt(keys.length)], value);
    }
}
