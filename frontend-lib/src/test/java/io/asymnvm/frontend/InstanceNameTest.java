package io.asymnvm.frontend;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.testsupport.ShmTempDirFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 7, item 10: two stores behind one {@code @PersistentTransaction} interface, each registered under its own
 * instance name; their records name the instance, so recovery re-executes each on its own implementation.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class InstanceNameTest {
    /** One cell of the {@link Cells} block. */
    public interface Slot {
        @PersistentTransaction
        void set(long value);
    }

    static final class SlotImpl implements Slot {
        private final int index;

        SlotImpl(int index) {
            this.index = index;
        }

        @Override
        public void set(long value) {
            Transaction tx = Transaction.current();
            tx.writeLong(tx.root() + 8 + 8L * index, value);
        }
    }

    /** Redo held back (10 s): what the crashed incarnation committed is recovered by re-execution. */
    private static final FrontendOptions UNAPPLIED = FrontendOptions.builder().redoBatch(1_000, 1 << 20, 10_000_000)
            .conclude();

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    @Test
    void shouldRecoverTwoInstancesOfOneInterfaceEachOnItsOwnImplementation() {
        try (TestBackend backend = TestBackend.start(dir, TestBackend.Transport.LOCAL)) {
            AsymNvm first = backend.open(0, UNAPPLIED);
            Cells cells = first.transactional(Cells.class, new Cells.Impl());
            cells.create(4);
            Slot a = first.transactional(Slot.class, new SlotImpl(0), "a");
            Slot b = first.transactional(Slot.class, new SlotImpl(1), "b");
            IllegalArgumentException twice = assertThrows(IllegalArgumentException.class,
                    () -> first.transactional(Slot.class, new SlotImpl(2), "a"));
            assertTrue(twice.getMessage().contains("instance name"), twice.getMessage());
            assertThrows(IllegalArgumentException.class, () -> first.transactional(Slot.class, new SlotImpl(2), " "));
            a.set(10);
            b.set(20);
            a.set(11);
            first.crash();

            try (AsymNvm missing = backend.open(0, UNAPPLIED)) { // its re-executions are never applied either
                missing.transactional(Cells.class, new Cells.Impl());
                missing.transactional(Slot.class, new SlotImpl(0), "a");
                AsymNvmException e = assertThrows(AsymNvmException.class, missing::recover);
                assertEquals(ErrorCode.RECOVERY_REQUIRED, e.errorCode(), e.getMessage());
                assertTrue(e.getMessage().contains("Slot#set(long)@a"), "the message lists what is registered: "
                        + e.getMessage());
                missing.crash();
            }
            try (AsymNvm second = backend.open(0, FrontendOptions.defaults())) {
                Cells again = second.transactional(Cells.class, new Cells.Impl());
                second.transactional(Slot.class, new SlotImpl(0), "a");
                second.transactional(Slot.class, new SlotImpl(1), "b");
                assertEquals(4, second.recover().transactions(), "the creation and the three sets");
                assertArrayEquals(new long[] {11, 20, 0, 0}, again.snapshot());
            }
        }
    }
}
