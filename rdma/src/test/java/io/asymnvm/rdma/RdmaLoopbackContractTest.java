package io.asymnvm.rdma;

import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.fabric.Access;
import io.asymnvm.core.fabric.EmulatedNic;
import io.asymnvm.core.fabric.Fabric;
import io.asymnvm.core.fabric.FabricConnection;
import io.asymnvm.core.fabric.FabricContractTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The fabric contract over the rdma fabric's own logic ({@link RdmaConnection} requester, {@link RdmaSession}
 * responder, {@link RdmaMessageLayout} messages, keys and access verdicts) joined by {@link LoopbackQueuePairs}
 * instead of a device: what runs here in place of {@link RdmaFabricContractTest}. DiSNI and the verbs are not
 * exercised. Small staging (8 slots of 8 KiB) and 16 KiB registrations make transfers queue for slots and split
 * across keys.
 */
@Timeout(60)
class RdmaLoopbackContractTest extends FabricContractTest {
    private static final RdmaOptions OPTIONS = new RdmaOptions(4, 8, 8 * 1024, 2_000);
    private LoopbackQueuePairs link;

    @Override
    protected Fabric createFabric(EmulatedNic nic) {
        link = new LoopbackQueuePairs(nic.regions(), id -> id == RW ? Access.READ_WRITE : Access.READ, 16 * 1024);
        // the contract's regions are not laid out by RegionIds per frontend: revoking a frontend revokes them all
        KeySource keys = new KeySource() {
            @Override
            public List<RdmaMessageLayout.Key> keysFor(int regionId, Access grant) {
                return link.keysFor(regionId, grant);
            }

            @Override
            public void rotate(int frontendId) {
                link.rotate(LoopbackQueuePairs.ROTATE_ALL);
            }
        };
        return link.fabric(nic, keys, OPTIONS);
    }

    @Override
    protected void stopTransport() {
        if (link != null) {
            link.close();
        }
    }

    @Test
    void shouldSplitLargeTransfersAcrossKeysAndStagingSlots() {
        FabricConnection c = attached();
        RdmaConnection rdma = (RdmaConnection) c;
        long messages = rdma.messagesSent();
        byte[] data = pattern(40_000, 9);
        c.write(RW, 5_000, data, 0, data.length).await();
        assertEquals(messages, rdma.messagesSent(), "a WRITE covered by keys is one-sided: no message");
        assertTrue(rdma.oneSidedPosted() >= 40_000 / (8 * 1024) + 1, "split into staging-slot pieces: "
                + rdma.oneSidedPosted());
        assertArrayEquals(data, backing.read(RW_BASE + 5_000, data.length));
        assertArrayEquals(data, c.read(RW, 5_000, data.length).await().bytes());
        byte[] ro = c.read(RO, 10_000, 60_000).await().bytes();
        assertArrayEquals(Arrays.copyOfRange(roContent, 10_000, 70_000), ro);
        assertEquals(messages, rdma.messagesSent(), "READs covered by keys are one-sided too");
        assertTrue(c.flush(0, false).await().value1() >= data.length, "the flush names every range written");
    }

    @Test
    void shouldRefuseATransferLargerThanTheStaging() {
        FabricConnection c = attached();
        assertFails(ErrorCode.BAD_REQUEST, c.read(RO, 0, (int) OPTIONS.maxTransfer() + 1));
        assertUsable(c, 6);
        // a WRITE the keys do not allow is not guessed at: the responder's verdict, as on tcp
        long messages = ((RdmaConnection) c).messagesSent();
        assertFails(ErrorCode.ACCESS_DENIED, c.write(RO, 0, new byte[8], 0, 8));
        assertEquals(messages + 1, ((RdmaConnection) c).messagesSent(), "one ACCESS message");
    }

    @Test
    void shouldRevokeTheKeysOfAFencedSessionWhenItsFrontendAttachesAgain() {
        FabricConnection old = attached();
        old.write(RW, 100, le(1), 0, 8).await();
        attachedSessions.get(0).fence("frontend attached again");
        FabricConnection fresh = attached(); // same frontend: the old session's registrations are replaced
        assertFails(ErrorCode.CONNECTION_LOST, old.write(RW, 100, le(2), 0, 8));
        assertEquals(1, backing.getLong(RW_BASE + 100), "the fenced session's WRITE never reached memory");
        assertUsable(fresh, 7);
    }
}
