package io.asymnvm.structures;

import io.asymnvm.backend.BackendConfiguration;
import io.asymnvm.backend.BackendNode;
import io.asymnvm.core.CorruptRecordException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.layout.SlabHeaderLayout;
import io.asymnvm.frontend.AsymNvm;
import io.asymnvm.frontend.FrontendOptions;
import io.asymnvm.frontend.PersistentTransaction;
import io.asymnvm.frontend.Transaction;
import io.asymnvm.structures.codec.Codecs;
import io.asymnvm.structures.layout.BTreeLayout;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 7, item 6: damage met while running is reported as corruption, naming the structure (or slab), the heap
 * address, what was expected and what was found, never as an {@link IllegalArgumentException} that blames the
 * caller. The PM file is damaged offline between two runs of the backend, as a bad disk or a stray write would.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class CorruptionWhileRunningTest {
    /** Two structures opened by name, and a raw allocation. */
    public interface Probe {
        @PersistentTransaction
        void fill(int n);

        @PersistentTransaction(readOnly = true)
        String tree(long key);

        @PersistentTransaction(readOnly = true)
        String hash(long key);

        @PersistentTransaction(readOnly = true)
        long[] roots();

        @PersistentTransaction
        long allocate(int size);
    }

    static final class ProbeImpl implements Probe {
        private final PersistentBTree<Long, String> tree;
        private final PersistentHashMap<Long, String> hash;

        ProbeImpl(AsymNvm nvm) {
            tree = PersistentBTree.open(nvm, "tree", Codecs.LONG, Codecs.STRING);
            hash = PersistentHashMap.open(nvm, "hash", Codecs.LONG, Codecs.STRING);
        }

        @Override
        public void fill(int n) {
            for (long k = 0; k < n; k++) {
                tree.put(k, "t" + k);
                hash.put(k, "h" + k);
            }
        }

        @Override
        public String tree(long key) {
            return tree.get(key);
        }

        @Override
        public String hash(long key) {
            return hash.get(key);
        }

        @Override
        public long[] roots() {
            return new long[] {tree.rootAddress(), hash.rootAddress()};
        }

        @Override
        public long allocate(int size) {
            return Transaction.current().allocate(size);
        }
    }

    @TempDir
    Path dir;

    private BackendNode start() {
        return BackendNode.start(BackendConfiguration.builder(dir.resolve("backend.pm")).size(128L << 20).maxFrontends(2)
                .conclude());
    }

    /** Fills both structures, closes cleanly, lets {@code damage} write the file, reopens: the probe to use. */
    private void damaged(DamageWriter damage, Consumer<Probe> check) throws IOException {
        long[] roots;
        long heapAt;
        try (BackendNode node = start(); AsymNvm nvm = AsymNvm.open(node.localFabric(), 1, FrontendOptions.defaults())) {
            Probe probe = nvm.transactional(Probe.class, new ProbeImpl(nvm));
            probe.fill(200);
            roots = probe.roots();
            heapAt = node.superblock().slabOffset(0);
        }
        try (FileChannel f = FileChannel.open(dir.resolve("backend.pm"), StandardOpenOption.READ,
                StandardOpenOption.WRITE)) {
            damage.write(new HeapWriter() {
                @Override
                public void putLong(long address, long value) throws IOException {
                    f.write(ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(0, value), heapAt + address);
                }

                @Override
                public long getLong(long address) throws IOException {
                    ByteBuffer b = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
                    f.read(b, heapAt + address);
                    return b.getLong(0);
                }
            }, roots[0], roots[1]);
        }
        try (BackendNode node = start(); AsymNvm nvm = AsymNvm.open(node.localFabric(), 1, FrontendOptions.defaults())) {
            check.accept(nvm.transactional(Probe.class, new ProbeImpl(nvm)));
        }
    }

    interface HeapWriter {
        void putLong(long heapAddress, long value) throws IOException;

        long getLong(long heapAddress) throws IOException;
    }

    interface DamageWriter {
        void write(HeapWriter heap, long treeRoot, long hashRoot) throws IOException;
    }

    @Test
    void shouldNameAPointerOutsideTheHeapAsTheStructuresCorruption() throws IOException {
        long bad = 1L << 50;
        damaged((heap, treeRoot, hashRoot) -> heap.putLong(treeRoot + BTreeLayout.ROOT_NODE_OFFSET, bad), probe -> {
            StructureCorruptException e = assertThrows(StructureCorruptException.class, () -> probe.tree(7));
            assertTrue(e.getMessage().contains("B+tree 'tree' is corrupt"), e.getMessage());
            assertEquals(bad, e.address(), e.getMessage());
            assertTrue(e.getMessage().contains("expected a range inside the heap"), e.getMessage());
            assertEquals("h7", probe.hash(7), "the other structure still serves");
        });
    }

    @Test
    void shouldNameADamagedRootHeaderReachedByName() throws IOException {
        damaged((heap, treeRoot, hashRoot) -> heap.putLong(hashRoot, 0x0BAD_F00DL), probe -> {
            StructureCorruptException e = assertThrows(StructureCorruptException.class, () -> probe.hash(7));
            assertTrue(e.getMessage().contains("hash map 'hash' is corrupt: root block header"), e.getMessage());
            assertTrue(e.getMessage().contains("actual magic 0xbadf00d"), e.getMessage());
            assertEquals("t7", probe.tree(7));
        });
    }

    @Test
    void shouldNameADamagedSlabHeaderAsCorruptAllocatorMetadata() throws IOException {
        long[] slab = new long[1];
        damaged((heap, treeRoot, hashRoot) -> {
            long slabSize = BackendConfiguration.DEFAULT_SLAB_SIZE;
            slab[0] = treeRoot / slabSize * slabSize;
            heap.putLong(slab[0] + SlabHeaderLayout.MAGIC_OFFSET, 0x5EED);
        }, probe -> {
            CorruptRecordException e = assertThrows(CorruptRecordException.class, () -> probe.allocate(64));
            assertEquals(ErrorCode.CORRUPT_RECORD, e.errorCode());
            assertEquals(slab[0] + SlabHeaderLayout.MAGIC_OFFSET, e.offset(), e.getMessage());
            assertTrue(e.getMessage().contains("slab header magic expected 0x"
                    + Long.toHexString(SlabHeaderLayout.MAGIC) + ", actual 0x5eed"), e.getMessage());
        });
    }

    @Test
    void shouldNameADamagedSlotCountInANodePage() throws IOException {
        long[] node = new long[1];
        damaged((heap, treeRoot, hashRoot) -> {
            node[0] = heap.getLong(treeRoot + BTreeLayout.ROOT_NODE_OFFSET);
            long head = heap.getLong(node[0]); // kind, level, count, heap start, garbage: little-endian
            long count = 0x7FFF;
            heap.putLong(node[0], head & ~(0xFFFFL << 16) | count << 16);
        }, probe -> {
            StructureCorruptException e = assertThrows(StructureCorruptException.class, () -> probe.tree(7));
            assertTrue(e.getMessage().contains("B+tree 'tree' is corrupt: node page " + node[0]
                    + ": slot count at page offset 2"), e.getMessage());
            assertTrue(e.getMessage().contains("actual 32767"), e.getMessage());
        });
    }
}
