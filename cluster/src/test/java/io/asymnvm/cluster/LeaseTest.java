package io.asymnvm.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.api.CuratorWatcher;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(60)
class LeaseTest extends SharedZooKeeperTest {
    @Test
    void shouldBeHeldWhileTheSessionLivesAndRefuseAnotherHolder() throws Exception {
        String name = ZkFixture.freshClusterName();
        ClusterSession a = fx.session(name);
        ClusterSession b = fx.session(name);
        String path = a.paths().backendLease();
        try (Lease lease = Lease.acquire(a, path, "b0", 0, null)) {
            assertTrue(lease.isHeld());
            Stat stat = new Stat();
            byte[] data = b.curator().getData().storingStatIn(stat).forPath(path);
            assertEquals("b0", new String(data, StandardCharsets.UTF_8));
            assertEquals(a.sessionId(), stat.getEphemeralOwner());
            AsymNvmException e = assertThrows(AsymNvmException.class, () -> Lease.acquire(b, path, "m1", 0, null));
            assertEquals(ErrorCode.NOT_PRIMARY, e.errorCode());
            assertTrue(e.getMessage().contains("held by node 'b0'") && e.getMessage().contains("'m1'"),
                    e.getMessage());
            assertNull(Lease.tryAcquire(b, path, "m1", null));
            assertTrue(lease.isHeld());
        }
        // released on close: another node takes it at once
        try (Lease next = Lease.acquire(b, path, "m1", 0, null)) {
            assertTrue(next.isHeld());
        }
    }

    @Test
    void shouldBeReleasedWhenTheHolderClosesItsSession() throws Exception {
        String name = ZkFixture.freshClusterName();
        ClusterSession a = fx.session(name);
        ClusterSession b = fx.session(name);
        String path = a.paths().backendLease();
        Lease.acquire(a, path, "b0", 0, null);
        long t0 = System.nanoTime();
        a.close();
        // a waiting acquirer gets it as soon as the session closes, well before a lease would expire
        try (Lease next = Lease.acquire(b, path, "m1", 10_000, null)) {
            assertTrue(next.isHeld());
            System.out.printf("lease taken over %.1f ms after the holder closed its session%n",
                    (System.nanoTime() - t0) / 1e6);
        }
    }

    @Test
    void shouldExpireAfterTheSessionTimeoutWhenTheHolderIsCutOff() throws Exception {
        String name = ZkFixture.freshClusterName();
        ClusterSession holder = fx.session(name);
        ClusterSession watcher = fx.session(name);
        String path = holder.paths().backendLease();
        CountDownLatch lost = new CountDownLatch(1);
        Lease lease = Lease.acquire(holder, path, "b0", 0, (l, s) -> {
            if (s == Lease.State.LOST) {
                lost.countDown();
            }
        });
        CountDownLatch deleted = new CountDownLatch(1);
        long[] noticedAt = new long[1];
        assertNotNull(watcher.curator().checkExists().usingWatcher((CuratorWatcher) e -> {
            if (e.getType() == Watcher.Event.EventType.NodeDeleted) {
                noticedAt[0] = System.nanoTime();
                deleted.countDown();
            }
        }).forPath(path));
        long cutAt = System.nanoTime();
        ZkFixture.cut(holder);
        assertTrue(deleted.await(ZkFixture.LEASE_MILLIS + 10_000, TimeUnit.MILLISECONDS),
                "the lease znode of a cut-off holder must vanish after its session timeout");
        double ms = (noticedAt[0] - cutAt) / 1e6;
        System.out.printf("lease of a cut-off holder noticed gone %.1f ms after the cut (lease %d ms)%n", ms,
                ZkFixture.LEASE_MILLIS);
        assertTrue(lost.await(5, TimeUnit.SECONDS), "the holder itself learns it lost the lease");
        assertEquals(Lease.State.LOST, lease.state());
        assertNull(watcher.curator().checkExists().forPath(path));
    }

    @Test
    void shouldReplaceTheStaleLeaseOfItsOwnEarlierIncarnation() throws Exception {
        String name = ZkFixture.freshClusterName();
        ClusterSession first = fx.session(name);
        String path = first.paths().backendLease();
        Lease.acquire(first, path, "b0", 0, null);
        long oldSession = first.sessionId();
        ZkFixture.kill(first);
        // the restarted node takes its lease back without waiting for its old session to expire ...
        ClusterSession second = fx.session(name);
        try (Lease again = Lease.acquire(second, path, "b0", 0, null)) {
            assertTrue(again.isHeld());
            Stat stat = second.curator().checkExists().forPath(path);
            assertEquals(second.sessionId(), stat.getEphemeralOwner());
            assertTrue(stat.getEphemeralOwner() != oldSession);
            // ... while another node id is still refused
            ClusterSession other = fx.session(name);
            assertNull(Lease.tryAcquire(other, path, "m1", null));
        }
    }
}
