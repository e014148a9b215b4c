package io.asymnvm.backend.slab;

import io.asymnvm.backend.BackendFixture;
import io.asymnvm.backend.BackendNode;
import io.asymnvm.core.fabric.FabricConnection;
import io.asymnvm.core.layout.ControlMessageLayout;
import io.asymnvm.core.layout.SlabHeaderLayout;
import io.asymnvm.recovery.crash.SimulatedPmRegion;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;

import static io.asymnvm.backend.BackendFixture.attach;
import static io.asymnvm.backend.BackendFixture.batch;
import static io.asymnvm.backend.BackendFixture.bytes;
import static io.asymnvm.backend.BackendFixture.grantSlab;
import static io.asymnvm.backend.BackendFixture.writeRedo;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A power failure at every persist point of a slab's return by one frontend and its grant to another (simulated
 * PM, several crash images per point): after the restart the slab is owned by the first frontend, free, or granted
 * to the second, never anything else, and whoever is granted it next sees a fresh header and zeroed memory.
 */
@Timeout(120)
class SlabPowerFailureTest {
    private static final int USED = 4096;
    private static final int IMAGES_PER_POINT = 12;
    private static final int MAX_POINTS = 40;

    private static Throwable lastFailure;

    @TempDir
    Path dir;

    private BackendNode start(SimulatedPmRegion region) {
        return BackendNode.start(BackendFixture.config(dir.resolve("simulated.pm")).conclude(), region);
    }

    private static byte[] le(long v) {
        return ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(v).array();
    }

    @Test
    void shouldLeaveAReturnedSlabOwnedFreeOrCleanlyGrantedAtEveryPowerFailure() {
        SimulatedPmRegion setup = new SimulatedPmRegion("slab return", (int) BackendFixture.SIZE);
        long first;
        long used;
        try (BackendNode node = start(setup)) {
            FabricConnection c = node.localFabric().connect();
            attach(c, 0);
            first = grantSlab(c)[0];
            long[] slab = grantSlab(c);
            used = slab[0];
            // frontend 0 allocated USED bytes in the slab, wrote them, and freed everything (live word back at 1)
            writeRedo(c, 0, 0, batch().write(slab[1] + SlabHeaderLayout.BUMP_OFFSET,
                    le(SlabHeaderLayout.HEADER_LENGTH + USED)).write(slab[1] + SlabHeaderLayout.HEADER_LENGTH,
                    bytes(USED, 5)).commit(1).seal(0, 0));
            node.awaitReplayed();
            c.close();
        }
        byte[] before = setup.durableImage();
        Random random = new Random(42);
        int points = 0;
        for (int k = 0; ; k++) {
            assertTrue(k < MAX_POINTS, "the return and grant did not complete without a power cut: " + lastFailure);
            SimulatedPmRegion region = new SimulatedPmRegion("slab return, power cut at persist " + k,
                    before.clone()); // the array becomes the region's memory
            boolean completed;
            try (BackendNode node = start(region)) {
                region.failAtPersist(region.persistCount() + k);
                completed = returnThenGrant(node, used);
            }
            if (completed) {
                break;
            }
            points++;
            for (int i = 0; i < IMAGES_PER_POINT; i++) {
                checkAfterRestart(new SimulatedPmRegion("after the cut", region.crashImage(random)), first, used,
                        "power cut at persist " + k + ", image " + i);
            }
        }
        assertTrue(points >= 4, "persist points explored: " + points);
        System.out.println("slab return and regrant: " + points + " power-cut points x " + IMAGES_PER_POINT
                + " crash images, all consistent");
    }

    /** Frontend 0 returns the slab, frontend 1 is granted one; false if the power was cut on the way. */
    private static boolean returnThenGrant(BackendNode node, long slab) {
        try {
            FabricConnection zero = node.localFabric().connect();
            attach(zero, 0);
            zero.call(ControlMessageLayout.request(ControlMessageLayout.KIND_RETURN_SLAB, 0, slab)).await();
            FabricConnection one = node.localFabric().connect();
            attach(one, 1);
            assertEquals(slab, grantSlab(one)[0]);
            return true;
        } catch (RuntimeException | Error e) {
            lastFailure = e;
            return false;
        }
    }

    private void checkAfterRestart(SimulatedPmRegion region, long first, long slab, String when) {
        try (BackendNode node = start(region)) {
            SlabTable table = node.slabs();
            long[] zero = table.ownedBy(0);
            long[] one = table.ownedBy(1);
            assertEquals(first, zero[0], when + ": frontend 0 keeps its first slab");
            FabricConnection c = node.localFabric().connect();
            if (Arrays.stream(zero).anyMatch(s -> s == slab)) {
                attach(c, 0); // the return did not happen: it can be made again
                c.call(ControlMessageLayout.request(ControlMessageLayout.KIND_RETURN_SLAB, 0, slab)).await();
            }
            attach(c, 1);
            if (Arrays.stream(one).noneMatch(s -> s == slab)) {
                assertEquals(slab, grantSlab(c)[0], when);
            }
            byte[] seen = BackendFixture.heap(c, slab * BackendFixture.SLAB, SlabHeaderLayout.HEADER_LENGTH + USED);
            ByteBuffer b = ByteBuffer.wrap(seen).order(ByteOrder.LITTLE_ENDIAN);
            assertEquals(SlabHeaderLayout.MAGIC, b.getLong(SlabHeaderLayout.MAGIC_OFFSET), when);
            assertEquals(SlabHeaderLayout.HEADER_LENGTH, b.getLong(SlabHeaderLayout.BUMP_OFFSET), when);
            assertEquals(SlabHeaderLayout.LIVE_EMPTY, b.getLong(SlabHeaderLayout.LIVE_OFFSET), when);
            assertArrayEquals(new byte[USED], Arrays.copyOfRange(seen, SlabHeaderLayout.HEADER_LENGTH, seen.length),
                    when + ": what frontend 0 left is zeroed");
            c.close();
        }
    }
}
