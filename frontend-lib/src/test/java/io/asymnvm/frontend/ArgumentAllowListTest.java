package io.asymnvm.frontend;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.fabric.Completion;
import io.asymnvm.core.fabric.Fabric;
import io.asymnvm.core.fabric.FabricConnection;
import io.asymnvm.core.fabric.ForwardingConnection;
import io.asymnvm.core.fabric.ForwardingFabric;
import io.asymnvm.core.layout.LogRecordLayout;
import io.asymnvm.core.layout.RegionIds;
import io.asymnvm.frontend.tx.ArgumentClasses;
import io.asymnvm.frontend.tx.ArgumentCodec;
import io.asymnvm.frontend.tx.TransactionEngine;
import io.asymnvm.testsupport.ShmTempDirFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Semantic-record arguments decode only allowed classes (issue 10, item 3): a crafted record naming any other
 * class stops the recovery of its frontend alone with {@code CLASS_NOT_REGISTERED} naming class, transaction and
 * method, and the class is never loaded; a call with an argument of a class not allowed is refused at the call;
 * classes are identified by name, so records decode after a restart that allows them in another order.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ArgumentAllowListTest {
    /** Redo stays in the frontend's buffer: committed transactions stay unapplied until a crash. */
    private static final FrontendOptions LAZY_REDO = FrontendOptions.builder()
            .redoBatch(1 << 20, 16 << 20, 10_000_000).conclude();

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    @Test
    void shouldRefuseAnArgumentClassThatIsNotAllowedAtTheCall() {
        try (AsymNvm nvm = AsymNvm.embedded(dir)) {
            Shelf shelf = nvm.transactional(Shelf.class, new Shelf.Impl());
            shelf.create(4);
            long last = nvm.stats().lastTxId();
            AsymNvmException e = assertThrows(AsymNvmException.class, () -> shelf.put(0, new Shelf.Weight(5)));
            assertEquals(ErrorCode.CLASS_NOT_REGISTERED, e.errorCode(), e.getMessage());
            assertTrue(e.getMessage().contains(Shelf.Weight.class.getName())
                    && e.getMessage().contains("put(int,java.lang.Object)")
                    && e.getMessage().contains("allowArgumentClasses(Weight.class)"), e.getMessage());
            assertEquals(last, nvm.stats().lastTxId(), "refused before anything was logged");

            nvm.allowArgumentClasses(Shelf.Weight.class, Shelf.Crate.class);
            shelf.put(0, new Shelf.Weight(5));
            // a field's runtime class is refused by its own name: the developer learns which class to allow
            List<Long> parts = new ArrayList<>(List.of(1L, 2L, 3L));
            AsymNvmException nested = assertThrows(AsymNvmException.class,
                    () -> shelf.put(1, new Shelf.Crate("c", parts)));
            assertEquals(ErrorCode.CLASS_NOT_REGISTERED, nested.errorCode(), nested.getMessage());
            assertTrue(nested.getMessage().contains("class java.util.ArrayList is not registered"),
                    nested.getMessage());
            nvm.allowArgumentClasses(ArrayList.class);
            shelf.put(1, new Shelf.Crate("c", parts));
            assertArrayEquals(new long[] {5, 6, 0, 0}, shelf.snapshot());
        }
    }

    @Test
    void shouldRefuseACraftedHashMapWithoutDecodingIt() {
        ArgumentClasses permissive = new ArgumentClasses(0);
        permissive.allow(HashMap.class);
        HashMap<String, String> map = new HashMap<>();
        map.put("k", "v");
        byte[] bytes = new ArgumentCodec(permissive).encode(new Object[] {map});
        AsymNvmException e = assertThrows(AsymNvmException.class,
                () -> new ArgumentCodec(new ArgumentClasses(0)).decode(bytes));
        assertEquals(ErrorCode.CLASS_NOT_REGISTERED, e.errorCode(), e.getMessage());
        assertTrue(e.getMessage().contains("class java.util.HashMap is not registered"), e.getMessage());
    }

    @Test
    void shouldAllowTheDefaultSetAndArraysOfAllowedClasses() {
        ArgumentClasses allowed = new ArgumentClasses(0);
        allowed.allow(Shelf.Weight.class);
        ArgumentCodec codec = new ArgumentCodec(allowed);
        Object[] args = {1, 2L, "s", new byte[] {1}, new String[] {"a"}, new Object[] {3, "b"},
                new java.math.BigDecimal("1.25"), java.time.Instant.ofEpochSecond(7),
                new Shelf.Weight[] {new Shelf.Weight(9)}, null};
        Object[] back = codec.decode(codec.encode(args));
        assertTrue(Arrays.deepEquals(args, back), Arrays.deepToString(back));
        AsymNvmException e = assertThrows(AsymNvmException.class,
                () -> codec.encode(new Object[] {new Shelf.Label[] {new Shelf.Label("x")}}));
        assertTrue(e.getMessage().contains(Shelf.Label.class.getName()), e.getMessage());
    }

    @Test
    void shouldStopOnlyTheRecoveryOfTheFrontendWhoseRecordNamesAClassNotAllowed() {
        assertFalse(TrapArgument.Flag.TOUCHED.get(), "nothing may have touched the trap class before the test");
        try (TestBackend backend = TestBackend.start(dir, TestBackend.Transport.LOCAL)) {
            AsymNvm other = backend.open(2, FrontendOptions.defaults());
            Cells otherCells = other.transactional(Cells.class, new Cells.Impl());
            otherCells.create(4);
            otherCells.set(0, 11);

            // frontend 1 logs a SafeArgument; the fabric rewrites the record's class name into TrapArgument's
            long trapTx;
            AsymNvm victim = AsymNvm.open(new RenamingFabric(backend.node().localFabric()), 1, LAZY_REDO);
            Shelf shelf = victim.transactional(Shelf.class, new Shelf.Impl());
            victim.allowArgumentClasses(SafeArgument.class);
            shelf.create(4);
            victim.sync();
            shelf.put(2, new SafeArgument(42));
            trapTx = victim.stats().lastTxId();
            victim.crash();

            try (AsymNvm again = backend.open(1, LAZY_REDO)) {
                again.allowArgumentClasses(SafeArgument.class);
                Shelf shelfAgain = again.transactional(Shelf.class, new Shelf.Impl());
                AsymNvmException e = assertThrows(AsymNvmException.class, again::recover);
                assertEquals(ErrorCode.CLASS_NOT_REGISTERED, e.errorCode(), e.getMessage());
                assertTrue(e.getMessage().contains("io.asymnvm.frontend.TrapArgument")
                        && e.getMessage().contains("tx " + trapTx)
                        && e.getMessage().contains(Shelf.class.getName() + "#put(int,java.lang.Object)"),
                        e.getMessage());
                AsymNvmException call = assertThrows(AsymNvmException.class, () -> shelfAgain.put(0, 1));
                assertEquals(ErrorCode.CLASS_NOT_REGISTERED, call.errorCode(), "no new call before recovery");
                assertFalse(TrapArgument.Flag.TOUCHED.get(), "the class named by the record was never initialized");

                // the other frontend on the same backend is unaffected, also through its own crash and recovery
                otherCells.set(1, 22);
                other.crash();
                try (AsymNvm otherAgain = backend.open(2, FrontendOptions.defaults())) {
                    Cells cells = otherAgain.transactional(Cells.class, new Cells.Impl());
                    otherAgain.recover();
                    cells.set(2, 33);
                    assertArrayEquals(new long[] {11, 22, 33, 0}, cells.snapshot());
                }
                again.crash();
            }
        }
        assertFalse(TrapArgument.Flag.TOUCHED.get(), "the class named by the record was never initialized");
    }

    @Test
    void shouldDecodeRecordsAfterARestartThatAllowsTheClassesInAnotherOrder() {
        long[] expected;
        AsymNvm first = AsymNvm.embedded(dir, LAZY_REDO);
        first.allowArgumentClasses(Shelf.Label.class, Shelf.Weight.class, Shelf.Crate.class, ArrayList.class);
        Shelf shelf = first.transactional(Shelf.class, new Shelf.Impl());
        first.transactional(Cells.class, new Cells.Impl(), "cells");
        shelf.create(4);
        first.sync();
        shelf.put(0, new Shelf.Label("abc"));
        shelf.put(1, new Shelf.Weight(70));
        shelf.put(2, new Shelf.Crate("c", new ArrayList<>(List.of(4L, 5L))));
        shelf.put(3, new Shelf.Weight(9));
        expected = new long[] {3, 70, 9, 9};
        long last = first.stats().lastTxId();
        assertEquals(last - 4, first.stats().appliedTxId(), "the puts must still be unapplied");
        first.crash();
        try (AsymNvm again = AsymNvm.embedded(dir, LAZY_REDO)) {
            again.transactional(Cells.class, new Cells.Impl(), "cells"); // interfaces in another order too
            Shelf shelfAgain = again.transactional(Shelf.class, new Shelf.Impl());
            again.allowArgumentClasses(ArrayList.class, Shelf.Crate.class);
            again.allowArgumentClasses(Shelf.Weight.class);
            again.allowArgumentClasses(Shelf.Label.class);
            TransactionEngine.RecoveryReport report = again.recover();
            assertEquals(4, report.transactions(), report.toString());
            assertArrayEquals(expected, shelfAgain.snapshot());
        }
    }

    /** A fabric whose semantic-ring WRITEs name {@link TrapArgument} where the frontend wrote SafeArgument. */
    private static final class RenamingFabric extends ForwardingFabric {
        private static final byte[] SAFE = "SafeArgumen".getBytes(StandardCharsets.US_ASCII);
        private static final byte[] TRAP = "TrapArgumen".getBytes(StandardCharsets.US_ASCII);

        RenamingFabric(Fabric delegate) {
            super(delegate);
        }

        @Override
        protected FabricConnection wrap(FabricConnection connection) {
            return new ForwardingConnection(connection) {
                @Override
                public Completion write(int regionId, long offset, byte[] data, int dataOffset, int length) {
                    if (RegionIds.kindOf(regionId) != RegionIds.KIND_SEMANTIC) {
                        return delegate().write(regionId, offset, data, dataOffset, length);
                    }
                    byte[] record = Arrays.copyOfRange(data, dataOffset, dataOffset + length);
                    int at = indexOf(record, SAFE);
                    if (at >= 0) {
                        System.arraycopy(TRAP, 0, record, at, TRAP.length);
                        LogRecordLayout.seal(record); // a well-formed record: only its content is hostile
                    }
                    return delegate().write(regionId, offset, record, 0, record.length);
                }
            };
        }

        private static int indexOf(byte[] haystack, byte[] needle) {
            outer:
            for (int i = 0; i + needle.length <= haystack.length; i++) {
                for (int j = 0; j < needle.length; j++) {
                    if (haystack[i + j] != needle[j]) {
                        continue outer;
                    }
                }
                return i;
            }
            return -1;
        }
    }
}
