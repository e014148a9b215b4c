package io.asymnvm.structures;

import io.asymnvm.backend.BackendConfiguration;
import io.asymnvm.backend.BackendNode;
import io.asymnvm.backend.image.PersistCountingRegion;
import io.asymnvm.backend.image.PersistCountingRegion.Kind;
import io.asymnvm.core.region.MappedRegion;
import io.asymnvm.frontend.AsymNvm;
import io.asymnvm.frontend.FrontendOptions;
import io.asymnvm.structures.codec.Codecs;
import io.asymnvm.structures.layout.NodePageLayout;
import io.asymnvm.testsupport.ShmTempDirFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Replacing a value overwrites it where it lives (issue 8 goal 7): a value of the same length (or a shorter one) is
 * written over the old inline payload or into the old blob, so the transaction's redo and the replayer's heap stores
 * are the value bytes, not a removed and re-inserted record with its allocator and slot traffic. Measured on a
 * backend serving its image through a {@link PersistCountingRegion}.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class InPlaceOverwriteTest {
    private static final long PM_SIZE = 128L << 20;
    /** A batch header (64), one WRITE entry header (16), a commit entry (16), the ring's 64-byte alignment. */
    private static final int REDO_OVERHEAD = 64 + 16 + 16 + 63;

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    /** A backend over a counting region and one frontend on the local fabric. */
    private final class Rig implements AutoCloseable {
        final PersistCountingRegion region;
        final BackendNode node;
        final AsymNvm nvm;
        final MapOps ops;

        Rig() {
            Path pm = dir.resolve("backend.pm");
            region = new PersistCountingRegion(MappedRegion.create(pm, PM_SIZE, MappedRegion.MapMode.FILE));
            node = BackendNode.start(BackendConfiguration.builder(pm).size(PM_SIZE).maxFrontends(2).port(-1)
                    .conclude(), region);
            region.classify(node.superblock());
            nvm = AsymNvm.open(node.localFabric(), 0, FrontendOptions.builder()
                    .credentials(node.credentialsFile()).conclude());
            ops = nvm.transactional(MapOps.class, new MapOps.Impl());
        }

        void drain() {
            nvm.sync();
            node.awaitReplayed();
        }

        @Override
        public void close() {
            try {
                nvm.close();
            } finally {
                try {
                    node.close();
                } finally {
                    region.close();
                }
            }
        }
    }

    private static String value(int length, char fill) {
        return String.valueOf(fill).repeat(length);
    }

    /**
     * An inline value (100 bytes) and an out-of-line one (1 KiB, beyond the inline limit), replaced by one of the
     * same length: the redo of that transaction is the value plus the batch's fixed overhead, far below a page, and
     * the replayer stores exactly the value bytes into the heap.
     */
    @ParameterizedTest(name = "{0} value {1} bytes")
    @CsvSource({"HASH_MAP, 100", "HASH_MAP, 1024", "BTREE, 100", "BTREE, 1024", "HASH_MAP, 256", "BTREE, 4000"})
    void shouldLogOnlyTheValueWhenOverwritingWithTheSameLength(StructureType type, int length) {
        try (Rig rig = new Rig()) {
            long root = rig.ops.create(type, Codecs.STRING_ID, "m");
            for (int i = 0; i < 20; i++) {
                rig.ops.put(root, "key" + i, value(length, (char) ('a' + i % 20)));
            }
            rig.drain();
            long redoBefore = rig.region.writtenBytes(Kind.REDO);
            long heapBefore = rig.region.writtenBytes(Kind.HEAP);

            assertEquals(value(length, 'f'), rig.ops.put(root, "key5", value(length, 'z')));
            rig.drain();

            long redo = rig.region.writtenBytes(Kind.REDO) - redoBefore;
            long heap = rig.region.writtenBytes(Kind.HEAP) - heapBefore;
            System.out.printf("%s value %d B: redo %d B, heap stores %d B%n", type, length, redo, heap);
            assertTrue(redo <= length + REDO_OVERHEAD, type + ": overwriting a " + length + "-byte value logged "
                    + redo + " redo bytes, more than the value and a batch's overhead (" + REDO_OVERHEAD + ")");
            assertTrue(redo < NodePageLayout.NODE_SIZE || length >= NodePageLayout.NODE_SIZE - REDO_OVERHEAD,
                    "redo of " + redo + " bytes is a page or more");
            assertEquals(length, heap, type + ": the replayer stored " + heap + " heap bytes for a " + length
                    + "-byte value");
            assertEquals(value(length, 'z'), rig.ops.get(root, "key5"));
            assertEquals(value(length, 'g'), rig.ops.get(root, "key6"));
            rig.ops.verify(root);
        }
    }

    /** A shorter value is written in place too (the record keeps its slot; what it no longer uses is garbage). */
    @ParameterizedTest
    @EnumSource(value = StructureType.class, names = {"HASH_MAP", "BTREE"})
    void shouldOverwriteAShorterValueInPlace(StructureType type) {
        try (Rig rig = new Rig()) {
            long root = rig.ops.create(type, Codecs.STRING_ID, "m");
            rig.ops.put(root, "inline", value(200, 'a'));
            rig.ops.put(root, "blob", value(3000, 'b'));
            rig.drain();
            long heapBefore = rig.region.writtenBytes(Kind.HEAP);
            rig.ops.put(root, "inline", value(150, 'c'));
            rig.ops.put(root, "blob", value(2000, 'd'));
            rig.drain();
            long heap = rig.region.writtenBytes(Kind.HEAP) - heapBefore;
            // the values, the inline record's tag, the page's garbage count, the blob reference's length word
            assertTrue(heap <= 150 + 2000 + 64, "shorter values stored " + heap + " heap bytes");
            rig.ops.verify(root);
            assertEquals(value(150, 'c'), rig.ops.get(root, "inline"));
            assertEquals(value(2000, 'd'), rig.ops.get(root, "blob"));
            // and grow again: no longer in place, still correct
            rig.ops.put(root, "inline", value(256, 'e'));
            rig.ops.put(root, "blob", value(2500, 'f'));
            rig.ops.verify(root);
            assertEquals(value(256, 'e'), rig.ops.get(root, "inline"));
            assertEquals(value(2500, 'f'), rig.ops.get(root, "blob"));
        }
    }

    /**
     * Values of every length class (empty, inline, the inline limit and one past it, blobs up to the largest
     * allowed value) replace each other at random on both structures, checked against a {@link HashMap} oracle,
     * verified, and read back after the frontend reopens on the replayed image.
     */
    @Test
    void shouldMatchAnOracleAcrossEveryValueLength() {
        long seed = Long.getLong("asymnvm.seed", System.nanoTime());
        Random rnd = new Random(seed);
        int[] lengths = {0, 1, 7, 8, 100, NodePageLayout.MAX_INLINE_VALUE - 1, NodePageLayout.MAX_INLINE_VALUE,
                NodePageLayout.MAX_INLINE_VALUE + 1, 1000, 1024, 4096, 20_000, NodePageLayout.MAX_VALUE_LENGTH};
        try (Nvm nvm = Nvm.start(dir, Nvm.Transport.LOCAL)) {
            MapOps m = nvm.nvm().transactional(MapOps.class, new MapOps.Impl());
            long[] roots = {m.create(StructureType.HASH_MAP, Codecs.STRING_ID, "h"),
                    m.create(StructureType.BTREE, Codecs.STRING_ID, "t")};
            Map<String, String> oracle = new HashMap<>();
            for (int op = 0; op < 400; op++) {
                String key = "k" + rnd.nextInt(24);
                int length = lengths[rnd.nextInt(lengths.length)];
                if (length == NodePageLayout.MAX_VALUE_LENGTH && rnd.nextInt(8) != 0) {
                    length = lengths[rnd.nextInt(lengths.length - 1)]; // keep the largest values rarer (redo budget)
                }
                String v = value(length, (char) ('a' + rnd.nextInt(26)));
                String expected = oracle.put(key, v);
                for (long root : roots) {
                    assertEquals(expected, m.put(root, key, v), "seed=" + seed + " op " + op + " key " + key);
                }
            }
            for (long root : roots) {
                m.verify(root);
            }
            nvm.reopen();
            MapOps again = nvm.nvm().transactional(MapOps.class, new MapOps.Impl());
            for (long root : roots) {
                again.verify(root);
                assertEquals(oracle.size(), again.size(root), "seed=" + seed);
                for (Map.Entry<String, String> e : oracle.entrySet()) {
                    assertEquals(e.getValue(), again.get(root, e.getKey()), "seed=" + seed + " key " + e.getKey());
                }
            }
        }
    }
}
