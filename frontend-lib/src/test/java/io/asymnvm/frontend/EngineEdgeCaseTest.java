package io.asymnvm.frontend;

import io.asymnvm.testsupport.ShmTempDirFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** Nested transactional calls, transactions larger than the page cache. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class EngineEdgeCaseTest {

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    /** Calls another transactional proxy from inside its own transaction. */
    public interface Outer {
        @PersistentTransaction
        void setTwo(int a, int b, long value);

        @PersistentTransaction
        void setTwoThenFail(int a, int b, long value);
    }

    static final class OuterImpl implements Outer {
        private final Cells cells;

        OuterImpl(Cells cells) {
            this.cells = cells;
        }

        @Override
        public void setTwo(int a, int b, long value) {
            cells.set(a, value);
            cells.set(b, value);
        }

        @Override
        public void setTwoThenFail(int a, int b, long value) {
            cells.set(a, value);
            cells.set(b, value);
            throw new IllegalStateException("fail after the nested calls");
        }
    }

    @Test
    void shouldJoinNestedTransactionalCallsIntoTheOuterTransaction() {
        try (AsymNvm nvm = AsymNvm.embedded(dir)) {
            Cells cells = nvm.transactional(Cells.class, new Cells.Impl());
            Outer outer = nvm.transactional(Outer.class, new OuterImpl(cells));
            cells.create(8);
            long commitsBefore = nvm.stats().commits();
            outer.setTwo(1, 2, 7);
            assertEquals(commitsBefore + 1, nvm.stats().commits(), "one transaction for the outer call");
            assertEquals(7, cells.get(1));
            assertEquals(7, cells.get(2));

            assertThrows(IllegalStateException.class, () -> outer.setTwoThenFail(3, 4, 9));
            assertEquals(0, cells.get(3), "the nested writes abort with the outer transaction");
            assertEquals(0, cells.get(4));
        }
        try (AsymNvm nvm = AsymNvm.embedded(dir)) {
            Cells cells = nvm.transactional(Cells.class, new Cells.Impl());
            assertEquals(7, cells.get(2));
            assertEquals(0, cells.get(3));
        }
    }

    @Test
    void shouldFinishATransactionWhosePagesExceedTheCache() {
        FrontendOptions tiny = FrontendOptions.builder().cacheBytes(1 << 16).conclude();
        int count = 40_000; // 320 KB of cells: five times the cache
        try (AsymNvm nvm = AsymNvm.embedded(dir, tiny)) {
            Cells cells = nvm.transactional(Cells.class, new Cells.Impl());
            cells.create(count);
            cells.set(count - 1, 5);
            cells.set(0, 3);
            assertEquals(8, cells.sum(), "a read-only scan over more pages than the cache holds");
        }
    }
}
