package io.asymnvm.frontend;

import io.asymnvm.frontend.tx.EngineStats;
import io.asymnvm.frontend.tx.RunCounts;
import io.asymnvm.testsupport.ShmTempDirFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * No wasted runs (issue 8 goal 4): a call that misses k cold pages runs at most twice, the first run collecting
 * every page it needs and one batch of READs (adjacent pages merged) fetching them; and a write into a block
 * allocated in the same transaction never fetches that block. Counted with the engine's exact counters: attempts
 * per call ({@link RunCounts}) and READs of page fetches (each one awaited READ of the fabric).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class NoWastedRunsTest {
    private static final int PAGE = 4096;
    /** Pages of the persistent array: more than the largest k, plus the pages read-ahead may bring in. */
    private static final int PAGES = 100;
    /** The first page of the array read cold: clear of the pages the warm-up's read-ahead brought in. */
    private static final int COLD_FROM = 16;
    /** Pages merged into one READ at most (PageFetcher.MAX_RUN_PAGES). */
    private static final int MERGE = 64;

    /** A persistent array of pages, the first long of each page holding a value. */
    public interface Paged {
        @PersistentTransaction
        void create(int pages);

        /** Sets the first long of {@code count} pages from {@code first}, {@code stride} pages apart. */
        @PersistentTransaction
        void fill(int first, int count, int stride, long base);

        @PersistentTransaction(readOnly = true)
        long sum(int first, int count, int stride);

        /** Touches only the root word: warms the slab header page. */
        @PersistentTransaction(readOnly = true)
        long root();

        /** Allocates a block of {@code pages} pages and writes the first long of each of them. */
        @PersistentTransaction
        long allocateAndFill(int pages, long base);

        @PersistentTransaction(readOnly = true)
        long sumBlock(long block, int pages);
    }

    public static final class PagedImpl implements Paged {
        private static long array() {
            return Transaction.current().root();
        }

        @Override
        public void create(int pages) {
            Transaction tx = Transaction.current();
            tx.setRoot(tx.allocate((long) pages * PAGE));
        }

        @Override
        public void fill(int first, int count, int stride, long base) {
            Transaction tx = Transaction.current();
            long a = array();
            for (int i = 0; i < count; i++) {
                tx.writeLong(a + (long) (first + i * stride) * PAGE, base + i);
            }
        }

        @Override
        public long sum(int first, int count, int stride) {
            Transaction tx = Transaction.current();
            long a = array();
            long s = 0;
            for (int i = 0; i < count; i++) {
                s += tx.readLong(a + (long) (first + i * stride) * PAGE);
            }
            return s;
        }

        @Override
        public long root() {
            return array();
        }

        @Override
        public long allocateAndFill(int pages, long base) {
            Transaction tx = Transaction.current();
            long block = tx.allocate((long) pages * PAGE);
            for (int i = 0; i < pages; i++) {
                tx.writeLong(block + (long) i * PAGE, base + i);
            }
            return block;
        }

        @Override
        public long sumBlock(long block, int pages) {
            Transaction tx = Transaction.current();
            long s = 0;
            for (int i = 0; i < pages; i++) {
                s += tx.readLong(block + (long) i * PAGE);
            }
            return s;
        }
    }

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    private static long expectedSum(long base, int count) {
        return base * count + (long) count * (count - 1) / 2;
    }

    /** Adjacent pages: one READ per 64, two runs; pages 5 apart (beyond read-ahead): one READ each, two runs. */
    @ParameterizedTest(name = "k={0} stride={1} over {2}")
    @CsvSource({"1, 1, LOCAL", "8, 1, LOCAL", "64, 1, LOCAL", "8, 5, LOCAL", "16, 5, LOCAL", "64, 1, TCP",
            "16, 5, TCP"})
    void shouldRunAtMostTwiceForKColdPages(int k, int stride, TestBackend.Transport transport) {
        long base = 1_000;
        try (TestBackend backend = TestBackend.start(dir, transport)) {
            try (AsymNvm nvm = backend.open(0, FrontendOptions.defaults())) {
                Paged paged = nvm.transactional(Paged.class, new PagedImpl());
                paged.create(PAGES);
                paged.fill(COLD_FROM, k, stride, base);
            }
            try (AsymNvm nvm = backend.open(0, FrontendOptions.defaults())) { // a new incarnation: nothing cached
                Paged paged = nvm.transactional(Paged.class, new PagedImpl());
                paged.root(); // the slab header (and its read-ahead) is cached; every page of the call is cold
                EngineStats before = nvm.stats();
                RunCounts.Snapshot runsBefore = nvm.runCounts();

                assertEquals(expectedSum(base, k), paged.sum(COLD_FROM, k, stride));

                EngineStats after = nvm.stats();
                RunCounts.Snapshot runs = nvm.runCounts().minus(runsBefore);
                long reads = after.fetchRoundTrips() - before.fetchRoundTrips();
                System.out.printf("k=%d stride=%d %s: %d runs, %d READs%n", k, stride, transport, runs.max(),
                        reads);
                assertEquals(1, runs.calls());
                assertEquals(2, runs.max(), () -> "one run collecting the " + k + " misses, one that hits");
                long expectedReads = stride == 1 ? (k + MERGE - 1) / MERGE : k;
                assertEquals(expectedReads, reads, () -> k + " pages " + stride + " apart");
            }
        }
    }

    /** The same read again: everything is cached, one run, no READ. */
    @Test
    void shouldRunOnceWhenEveryPageIsCached() {
        try (TestBackend backend = TestBackend.start(dir, TestBackend.Transport.LOCAL);
             AsymNvm nvm = backend.open(0, FrontendOptions.defaults())) {
            Paged paged = nvm.transactional(Paged.class, new PagedImpl());
            paged.create(PAGES);
            paged.fill(COLD_FROM, 64, 1, 7);
            paged.sum(COLD_FROM, 64, 1);
            EngineStats before = nvm.stats();
            RunCounts.Snapshot runsBefore = nvm.runCounts();
            assertEquals(expectedSum(7, 64), paged.sum(COLD_FROM, 64, 1));
            assertEquals(1, nvm.runCounts().minus(runsBefore).max());
            assertEquals(before.fetchRoundTrips(), nvm.stats().fetchRoundTrips());
        }
    }

    /**
     * A block allocated and written in one transaction is not read first: no READ for its pages (they are above
     * the slab's bump pointer, zero since the grant). The frontend is cold; a small block allocated first brings
     * the page where the next block starts into the cache (it holds live bytes below the bump pointer, so it is
     * fetched). What was written is there after a restart of the frontend, and so is the data of the neighbours.
     */
    @Test
    void shouldNotFetchABlockAllocatedInTheSameTransaction() {
        long base = 500;
        int pages = 32;
        long block;
        try (TestBackend backend = TestBackend.start(dir, TestBackend.Transport.LOCAL)) {
            try (AsymNvm nvm = backend.open(0, FrontendOptions.defaults())) {
                Paged paged = nvm.transactional(Paged.class, new PagedImpl());
                paged.create(PAGES);
                paged.fill(0, PAGES, 1, 1);
            }
            try (AsymNvm nvm = backend.open(0, FrontendOptions.defaults())) {
                Paged paged = nvm.transactional(Paged.class, new PagedImpl());
                paged.root();
                paged.allocateAndFill(1, 0);
                EngineStats before = nvm.stats();
                RunCounts.Snapshot runsBefore = nvm.runCounts();
                block = paged.allocateAndFill(pages, base);
                long reads = nvm.stats().fetchRoundTrips() - before.fetchRoundTrips();
                RunCounts.Snapshot runs = nvm.runCounts().minus(runsBefore);
                System.out.printf("allocate and fill %d pages: %d runs, %d READs%n", pages, runs.max(), reads);
                assertEquals(0, reads, "a fresh block is not fetched");
                assertEquals(1, runs.max());
            }
            try (AsymNvm nvm = backend.open(0, FrontendOptions.defaults())) {
                Paged paged = nvm.transactional(Paged.class, new PagedImpl());
                assertEquals(expectedSum(base, pages), paged.sumBlock(block, pages));
                assertEquals(expectedSum(1, PAGES), paged.sum(0, PAGES, 1), "the neighbours' data");
            }
        }
    }
}
