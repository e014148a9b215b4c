package io.asymnvm.examples.cli;

import io.asymnvm.backend.BackendConfiguration;
import io.asymnvm.backend.BackendNode;
import io.asymnvm.backend.InspectTool;
import io.asymnvm.core.inspect.HeapInspector;
import io.asymnvm.core.layout.SlabHeaderLayout;
import io.asymnvm.frontend.AsymNvm;
import io.asymnvm.frontend.FrontendOptions;
import io.asymnvm.frontend.PersistentTransaction;
import io.asymnvm.structures.PersistentBTree;
import io.asymnvm.structures.PersistentHashMap;
import io.asymnvm.structures.codec.Codecs;
import io.asymnvm.structures.layout.BTreeLayout;
import io.asymnvm.testsupport.ShmTempDirFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.StringWriter;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code asymnvm inspect --deep} (issue 7, item 4): the offline walk of the block allocator and of every named
 * structure passes on a clean image with several slabs, names each class of damage, and never writes.
 */
@Timeout(120)
class DeepInspectTest {
    /** A B+tree and a hash map with values big enough (blobs) to fill several slabs. */
    public interface Store {
        @PersistentTransaction
        void put(long key, byte[] value);

        @PersistentTransaction
        void remove(long key);

        @PersistentTransaction(readOnly = true)
        long[] roots();
    }

    static final class StoreImpl implements Store {
        private final PersistentBTree<Long, byte[]> tree;
        private final PersistentHashMap<Long, byte[]> hash;

        StoreImpl(AsymNvm nvm) {
            this(nvm, "");
        }

        StoreImpl(AsymNvm nvm, String suffix) {
            tree = PersistentBTree.open(nvm, "tree" + suffix, Codecs.LONG, Codecs.BYTES);
            hash = PersistentHashMap.open(nvm, "hash" + suffix, Codecs.LONG, Codecs.BYTES);
        }

        @Override
        public void put(long key, byte[] value) {
            tree.put(key, value);
            hash.put(key, value);
        }

        @Override
        public void remove(long key) {
            tree.remove(key);
            hash.remove(key);
        }

        @Override
        public long[] roots() {
            return new long[] {tree.rootAddress(), hash.rootAddress()};
        }
    }

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    private Path pm;
    private long heapAt;
    private long[] roots;
    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    /** 1,500 puts of 1,100-byte values (several 1 MiB slabs), every third key removed (free lists). */
    private void build() {
        pm = dir.resolve("backend.pm");
        try (BackendNode node = BackendNode.start(BackendConfiguration.builder(pm).size(192L << 20).maxFrontends(2)
                .conclude()); AsymNvm nvm = AsymNvm.open(node.localFabric(), 1, FrontendOptions.defaults())) {
            Store store = nvm.transactional(Store.class, new StoreImpl(nvm));
            byte[] value = new byte[1_100];
            for (long k = 0; k < 1_500; k++) {
                Arrays.fill(value, (byte) k);
                store.put(k, value);
            }
            for (long k = 0; k < 1_500; k += 3) {
                store.remove(k);
            }
            roots = store.roots();
            heapAt = node.superblock().slabOffset(0);
            assertTrue(nvm.stats().slabGrants() >= 3, "several slabs: " + nvm.stats());
        }
    }

    private int inspect(String... extra) {
        String[] args = new String[extra.length + 3];
        args[0] = "inspect";
        args[1] = "--pm";
        args[2] = pm.toString();
        System.arraycopy(extra, 0, args, 3, extra.length);
        return CliFixture.executeAsMain(out, err, args);
    }

    private void putLong(long heapAddress, long value) throws IOException {
        try (FileChannel f = FileChannel.open(pm, StandardOpenOption.WRITE)) {
            f.write(ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(0, value), heapAt + heapAddress);
        }
    }

    @Test
    void shouldPassACleanImageWithSeveralSlabsAndNeverWrite() throws IOException {
        build();
        byte[] before = Files.readAllBytes(pm);
        assertEquals(0, inspect("--deep"), out + "\n" + err);
        assertTrue(out.toString().contains("deep: 2 named structures, 2000 entries"), out.toString());
        HeapInspector.Findings f = InspectTool.deepInspect(pm);
        assertTrue(f.ok(), f.problems().toString());
        assertTrue(f.freeBlocks() > 0, "removals freed blobs onto free lists: " + f);
        assertEquals(0, inspect("--deep", "--json"), err.toString());
        assertTrue(out.toString().contains("\"deep\":{\"problems\":[]"), out.toString());
        assertArrayEquals(before, Files.readAllBytes(pm), "inspect --deep wrote to the image");
    }

    @Test
    void shouldNameAPointerOutsideTheHeap() throws IOException {
        build();
        putLong(roots[0] + BTreeLayout.ROOT_NODE_OFFSET, 1L << 45);
        assertEquals(1, inspect("--deep"));
        assertTrue(err.toString().contains("structure 'tree' of frontend 1"), err.toString());
        assertTrue(err.toString().contains("expected a range inside the heap"), err.toString());
    }

    @Test
    void shouldNameAPointerIntoAnotherFrontendsSlabs() throws IOException {
        build();
        long otherRoot;
        try (BackendNode node = BackendNode.start(BackendConfiguration.builder(pm).size(192L << 20).maxFrontends(2)
                .conclude()); AsymNvm nvm = AsymNvm.open(node.localFabric(), 0, FrontendOptions.defaults())) {
            Store store = nvm.transactional(Store.class, new StoreImpl(nvm, "-0"));
            store.put(1, new byte[10]);
            otherRoot = store.roots()[0];
        }
        assertEquals(0, inspect("--deep"), "two frontends, both clean: " + err);
        long otherNode;
        try (FileChannel f = FileChannel.open(pm, StandardOpenOption.READ)) {
            ByteBuffer b = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
            f.read(b, heapAt + otherRoot + BTreeLayout.ROOT_NODE_OFFSET);
            otherNode = b.getLong(0);
        }
        putLong(roots[0] + BTreeLayout.ROOT_NODE_OFFSET, otherNode); // frontend 1's tree now leads into frontend 0's
        assertEquals(1, inspect("--deep"));
        assertTrue(err.toString().contains("structure 'tree' of frontend 1 at " + roots[0] + ": block "),
                err.toString());
        assertTrue(err.toString().contains(" expected in frontend 1's slabs, actual frontend 0's"), err.toString());
    }

    @Test
    void shouldNameDamagedAllocatorMetadata() throws IOException {
        build();
        long slab = roots[1] / BackendConfiguration.DEFAULT_SLAB_SIZE * BackendConfiguration.DEFAULT_SLAB_SIZE;
        putLong(slab + SlabHeaderLayout.MAGIC_OFFSET, 0x5EED);
        putLong(slab + SlabHeaderLayout.freeHeadOffset(3) + BackendConfiguration.DEFAULT_SLAB_SIZE,
                2 * BackendConfiguration.DEFAULT_SLAB_SIZE + 12_345); // the next slab: a free list off a boundary
        assertEquals(1, inspect("--deep"));
        assertTrue(err.toString().contains("header magic at " + slab + " expected 0x"
                + Long.toHexString(SlabHeaderLayout.MAGIC) + ", actual 0x5eed"), err.toString());
        assertTrue(err.toString().contains("free list of size class 3"), err.toString());
    }
}
