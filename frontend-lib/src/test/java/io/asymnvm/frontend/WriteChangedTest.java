package io.asymnvm.frontend;

import io.asymnvm.backend.BackendConfiguration;
import io.asymnvm.testsupport.ShmTempDirFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link Transaction#writeChanged} (issue 8: one copy per changed page, not two): a structure's changed copy of a
 * page becomes the transaction's page when nothing else changed that page in the transaction, and only then; either
 * way exactly the written ranges commit, survive a reopen, and nothing outside them changes.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class WriteChangedTest {
    static final int PAGE = BackendConfiguration.DEFAULT_PAGE_SIZE;
    private static final VarHandle LONG = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    /** How {@link Pages#change} builds its changed copy. */
    enum Mode {
        /** A copy of the transaction's view of the page, the view unchanged since: taken without a copy. */
        FROM_VIEW,
        /** The transaction wrote the page first (it has its own copy): the ranges are written into that copy. */
        AFTER_OWN_WRITE,
        /** A copy of something that is not the transaction's view: the ranges are written, the copy not taken. */
        FROM_OTHER_ARRAY
    }

    public interface Pages {
        @PersistentTransaction
        long allocatePage();

        /** Sets the long at {@code page + at} through writeChanged; returns whether the copy was taken. */
        @PersistentTransaction
        boolean change(long page, int at, long value, Mode mode);

        @PersistentTransaction(readOnly = true)
        long get(long address);
    }

    static final class PagesImpl implements Pages {
        @Override
        public long allocatePage() {
            long block = Transaction.current().allocate(2L * PAGE);
            return (block + PAGE - 1) / PAGE * PAGE; // one whole page inside the block
        }

        @Override
        public boolean change(long page, int at, long value, Mode mode) {
            Transaction tx = Transaction.current();
            if (mode == Mode.AFTER_OWN_WRITE) {
                tx.writeLong(page, 7); // the transaction's own copy of the page now exists
            }
            byte[] origin = tx.readShared(page, PAGE);
            byte[] image = (mode == Mode.FROM_OTHER_ARRAY ? origin.clone() : origin).clone();
            LONG.set(image, at, value);
            boolean taken = tx.writeChanged(page, image, mode == Mode.FROM_OTHER_ARRAY ? image.clone() : origin,
                    new int[] {at}, new int[] {at + Long.BYTES}, 1);
            // what the transaction reads now: the change, and, if it took the copy, that very array
            if (tx.readLong(page + at) != value || taken != (tx.readShared(page, PAGE) == image)) {
                throw new IllegalStateException("the transaction does not see its change as written");
            }
            return taken;
        }

        @Override
        public long get(long address) {
            return Transaction.current().readLong(address);
        }
    }

    @Test
    void shouldTakeTheCopyOnlyWhenItIsTheSameAsWritingTheRanges() {
        long page;
        try (AsymNvm nvm = AsymNvm.embedded(dir)) {
            Pages pages = nvm.transactional(Pages.class, new PagesImpl());
            page = pages.allocatePage();
            assertTrue(pages.change(page, 64, 11, Mode.FROM_VIEW), "an unchanged view's copy is taken");
            assertTrue(pages.change(page, 128, 12, Mode.FROM_VIEW), "again in the next transaction");
            assertFalse(pages.change(page, 192, 13, Mode.AFTER_OWN_WRITE), "the transaction had its own copy");
            assertFalse(pages.change(page, 256, 14, Mode.FROM_OTHER_ARRAY), "not a copy of the view");
            assertValues(pages, page);
            nvm.sync();
        }
        try (AsymNvm nvm = AsymNvm.embedded(dir)) {
            assertValues(nvm.transactional(Pages.class, new PagesImpl()), page); // what the backend holds
        }
    }

    private static void assertValues(Pages pages, long page) {
        assertEquals(7, pages.get(page), "the write before the change");
        assertEquals(11, pages.get(page + 64));
        assertEquals(12, pages.get(page + 128));
        assertEquals(13, pages.get(page + 192));
        assertEquals(14, pages.get(page + 256));
        for (int at = 320; at < PAGE; at += 8) {
            assertEquals(0, pages.get(page + at), "nothing outside the ranges changed, offset " + at);
        }
    }
}
