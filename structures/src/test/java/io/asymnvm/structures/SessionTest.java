package io.asymnvm.structures;

import io.asymnvm.structures.layout.StructureHeaderLayout;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The session's blocks, found by a scan up to {@link Session#INDEXED_FROM} and by an index beyond: one working copy
 * per address, a fresh block replaces a loaded one in its place, and flush writes in first-load order. Also the
 * in-place name comparison a handle opened by name runs on every operation.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class SessionTest {
    private static final int BLOCK = 64;
    private static final int BLOCKS = 3 * Session.INDEXED_FROM;

    @Test
    void shouldKeepOneCopyPerAddressAndFlushInLoadOrderPastTheIndexThreshold() {
        MemoryTransaction tx = new MemoryTransaction(BLOCKS * BLOCK);
        for (int i = 0; i < tx.memory.length; i++) {
            tx.memory[i] = (byte) (i / BLOCK);
        }
        Session s = new Session(tx);
        Block[] loaded = new Block[BLOCKS];
        // load in descending address order, so the load order differs from the address order
        for (int i = BLOCKS - 1; i >= 0; i--) {
            loaded[i] = s.load((long) i * BLOCK, BLOCK);
            assertEquals((byte) i, loaded[i].bytes[0], "block " + i + " read from the transaction");
        }
        for (int i = 0; i < BLOCKS; i++) {
            assertSame(loaded[i], s.load((long) i * BLOCK, BLOCK), "one working copy of block " + i);
            assertSame(loaded[i], s.peek((long) i * BLOCK, BLOCK), "peek finds the kept copy of block " + i);
        }
        Block replaced = s.fresh(5L * BLOCK, BLOCK);
        assertNotSame(loaded[5], replaced);
        assertSame(replaced, s.load(5L * BLOCK, BLOCK), "fresh replaces the loaded copy");
        for (int i = 0; i < BLOCKS; i++) {
            Block b = i == 5 ? replaced : loaded[i];
            b.putByte(1, 100 + i);
        }
        s.flush();
        assertEquals(BLOCKS, tx.writes.size(), "one write per changed block");
        for (int k = 0; k < BLOCKS; k++) {
            long expected = (long) (BLOCKS - 1 - k) * BLOCK + 1; // first-load order, the replaced block in its place
            assertEquals(expected, tx.writes.get(k)[0], "write " + k);
        }
        for (int i = 0; i < BLOCKS; i++) {
            assertEquals((byte) (100 + i), tx.memory[i * BLOCK + 1], "block " + i + " changed byte written");
        }
    }

    @Test
    void shouldAdoptACopyOnlyWhereNoBlockIsKept() {
        MemoryTransaction tx = new MemoryTransaction(4 * BLOCK);
        Session s = new Session(tx);
        byte[] copy = new byte[BLOCK];
        copy[0] = 42;
        Block adopted = s.adopt(0, copy);
        assertSame(copy, adopted.bytes, "the caller's private copy becomes the working copy");
        assertSame(adopted, s.load(0, BLOCK));
        Block loaded = s.load(BLOCK, BLOCK);
        assertSame(loaded, s.adopt(BLOCK, new byte[BLOCK]), "a kept block wins over a later copy");
        adopted.putByte(1, 7);
        s.flush();
        assertEquals(1, tx.writes.size());
        assertEquals(7, tx.memory[1]);
    }

    @Test
    void shouldCompareTheHeaderNameInPlace() {
        byte[] block = new byte[StructureHeaderLayout.ROOT_BLOCK_LENGTH];
        byte[] name = "orders".getBytes(StandardCharsets.UTF_8);
        StructureHeaderLayout.encode(block, StructureType.HASH_MAP.id(), 2, 2, name);
        assertTrue(StructureHeaderLayout.hasName(block, name));
        assertEquals("orders", StructureHeaderLayout.name(block), "the same name the decoder reads");
        assertFalse(StructureHeaderLayout.hasName(block, "orderz".getBytes(StandardCharsets.UTF_8)), "same length");
        assertFalse(StructureHeaderLayout.hasName(block, "order".getBytes(StandardCharsets.UTF_8)), "a prefix");
        assertFalse(StructureHeaderLayout.hasName(block, "orders2".getBytes(StandardCharsets.UTF_8)), "longer");
        byte[] noHeader = block.clone();
        noHeader[StructureHeaderLayout.MAGIC_OFFSET] ^= 1;
        assertFalse(StructureHeaderLayout.hasName(noHeader, name), "no magic, no name");
        assertArrayEquals(name, java.util.Arrays.copyOfRange(block, StructureHeaderLayout.NAME_OFFSET,
                StructureHeaderLayout.NAME_OFFSET + name.length));
    }
}
