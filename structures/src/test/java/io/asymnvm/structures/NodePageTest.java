package io.asymnvm.structures;

import io.asymnvm.structures.layout.NodePageLayout;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Slotted node pages in DRAM: ordered slots, compaction, accounting, and small redo for single inserts. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class NodePageTest {

    private static byte[] record(String key, int valueLength) {
        byte[] k = key.getBytes(StandardCharsets.UTF_8);
        byte[] v = new byte[valueLength];
        Arrays.fill(v, (byte) key.length());
        return Records.leaf(null, k, v);
    }

    @Test
    void shouldKeepSlotsOrderedThroughInsertsRemovesAndCompaction() {
        long seed = Long.getLong("asymnvm.seed", 13);
        Random rnd = new Random(seed);
        NodePage p = NodePage.init(new Block(0, new byte[NodePageLayout.NODE_SIZE]), NodePageLayout.KIND_LEAF, 0);
        TreeMap<String, Integer> model = new TreeMap<>();
        for (int i = 0; i < 20_000; i++) {
            String key = "k" + rnd.nextInt(400);
            byte[] k = key.getBytes(StandardCharsets.UTF_8);
            int at = p.search(k);
            assertEquals(model.containsKey(key), at >= 0, "seed=" + seed + " op " + i);
            if (at >= 0) {
                p.remove(at);
                model.remove(key);
            } else {
                int length = rnd.nextInt(120);
                byte[] rec = record(key, length);
                boolean fits = p.hasRoom(rec.length);
                assertEquals(fits, p.insert(-at - 1, rec), "seed=" + seed + " op " + i);
                if (fits) {
                    model.put(key, length);
                }
            }
            assertEquals(model.size(), p.count(), "seed=" + seed);
        }
        PageChecks.checkPage(null, 0, p, false, null, null);
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < p.count(); i++) {
            keys.add(new String(p.key(i), StandardCharsets.UTF_8));
            assertEquals((int) model.get(keys.get(i)), p.tag(i));
        }
        assertEquals(new ArrayList<>(model.keySet()), keys);
    }

    @Test
    void shouldWriteLittleMoreThanTheRecordForAnInsertIntoAPopulatedPage() {
        MemoryTransaction tx = new MemoryTransaction(NodePageLayout.NODE_SIZE);
        Block b = new Block(0, new byte[NodePageLayout.NODE_SIZE]);
        NodePage p = NodePage.init(b, NodePageLayout.KIND_LEAF, 0);
        for (int i = 0; i < 60; i++) {
            p.append(record(String.format("key%03d", i * 2), 20));
        }
        b.flush(tx);
        tx.writes.clear();
        byte[] rec = record("key101", 20);
        p.insert(-p.search("key101".getBytes(StandardCharsets.UTF_8)) - 1, rec);
        b.flush(tx);
        long bytes = tx.writes.stream().mapToLong(w -> w[1]).sum();
        assertTrue(bytes < 200, "an insert wrote " + bytes + " bytes of a 4 KiB page");
        assertArrayEquals(rec, p.record(51));
        assertFalse(p.hasRoom(NodePageLayout.CAPACITY));
    }
}
