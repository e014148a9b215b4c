package io.asymnvm.structures;

import io.asymnvm.testsupport.ShmTempDirFactory;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * One annotated method touching two structures is atomic as a whole: an exception halfway (after the hash map
 * lost entries, buckets split and the B+tree gained entries and split nodes) leaves both exactly as they were,
 * also after the PM image is reopened.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class MultiStructureTransactionTest {
    private static final int ENTRIES = 2000;

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    @ParameterizedTest
    @EnumSource(Nvm.Transport.class)
    void shouldLeaveBothStructuresUnchangedWhenAMoveFailsHalfway(Nvm.Transport transport) {
        try (Nvm nvm = Nvm.start(dir, transport)) {
            MapOps m = nvm.nvm().transactional(MapOps.class, new MapOps.Impl());
            MoveOps move = nvm.nvm().transactional(MoveOps.class, new MoveOps.Impl());
            long[] roots = move.createPair();
            long hash = roots[0];
            long tree = roots[1];
            for (int from = 0; from < ENTRIES; from += 200) {
                Object[] keys = new Object[200];
                String[] values = new String[200];
                for (int i = 0; i < 200; i++) {
                    keys[i] = (long) from + i;
                    values[i] = KeyKind.loadValue(from + i);
                }
                m.putAll(hash, keys, values);
            }

            move.move(hash, tree, new long[] {7}, -1);
            assertNull(m.get(hash, 7L));
            assertEquals(KeyKind.loadValue(7), m.get(tree, 7L));

            List<Object[]> hashBefore = m.entries(hash);
            List<Object[]> treeBefore = m.entries(tree);
            long treeHeightBefore = m.shape(tree);
            long[] many = new long[600];
            for (int i = 0; i < many.length; i++) {
                many[i] = 1000 + i;
            }
            IllegalStateException e = assertThrows(IllegalStateException.class,
                    () -> move.move(hash, tree, many, 500));
            assertTrue(e.getMessage().contains("injected"), e.getMessage());
            assertUnchanged(m, hash, tree, hashBefore, treeBefore, treeHeightBefore, "after the failed move");

            nvm.reopen();
            MapOps again = nvm.nvm().transactional(MapOps.class, new MapOps.Impl());
            assertUnchanged(again, hash, tree, hashBefore, treeBefore, treeHeightBefore, "after reopen");

            MoveOps moveAgain = nvm.nvm().transactional(MoveOps.class, new MoveOps.Impl());
            moveAgain.move(hash, tree, many, -1);
            assertEquals(ENTRIES - 601, again.size(hash));
            assertEquals(601, again.size(tree));
            assertTrue(again.shape(tree) > treeHeightBefore, "600 moved keys split the B+tree");
            again.verify(hash);
            again.verify(tree);
        }
    }

    private static void assertUnchanged(MapOps m, long hash, long tree, List<Object[]> hashBefore,
                                        List<Object[]> treeBefore, long treeHeight, String when) {
        assertEquals(ENTRIES - 1, m.size(hash), when);
        assertEquals(1, m.size(tree), when);
        assertEquals(KeyKind.loadValue(1000), m.get(hash, 1000L), when);
        assertNull(m.get(tree, 1000L), when);
        assertEquals(treeHeight, m.shape(tree), when);
        assertEntriesEqual(hashBefore, m.entries(hash), when + " hash map");
        assertEntriesEqual(treeBefore, m.entries(tree), when + " B+tree");
        m.verify(hash);
        m.verify(tree);
    }

    private static void assertEntriesEqual(List<Object[]> want, List<Object[]> got, String what) {
        assertEquals(want.size(), got.size(), what);
        for (int i = 0; i < want.size(); i++) {
            assertEquals(want.get(i)[0], got.get(i)[0], what + " key at " + i);
            assertEquals(want.get(i)[1], got.get(i)[1], what + " value at " + i);
        }
    }
}
