package io.asymnvm.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.AsyncCallback;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The backend's view of the live mirrors converges to ZooKeeper's state after reads failed with a connection loss.
 *
 * <p>The watcher's ZooKeeper handle answers chosen reads with {@code CONNECTIONLOSS} (as a dropped connection does)
 * while a mirror takes its lease; once the reads work again and the client reconnects, the view must show the mirror.
 * Curator 5.9's own cache does not: its re-read after the reconnection finds the parent's stat unchanged (stored by a
 * re-read whose listing of the children failed) and never lists the children again, so the mirror stays missing.
 */
@Timeout(60)
class ReloadingCacheTest extends SharedZooKeeperTest {
    private static final int LEASE_MILLIS = 3_000;
    /** Retries of the watcher's client (few and short: a failed read gives up within a second). */
    private static final int RETRIES = 2;

    @Test
    void shouldSeeAMirrorWhoseLeaseWasMissedByReadsThatFailedWithAConnectionLoss() throws Exception {
        String name = ZkFixture.freshClusterName();
        ClusterSession m1 = fx.session(name, LEASE_MILLIS);
        MirrorLeases.hold(m1, "m1", null);
        String leases = m1.paths().leases();

        FlakyReads flaky = new FlakyReads(leases);
        try (CuratorFramework client = flakyClient(flaky)) {
            client.start();
            assertTrue(client.blockUntilConnected(10, TimeUnit.SECONDS), "watcher connected");
            AtomicInteger changes = new AtomicInteger();
            ReloadingCache cache = new ReloadingCache(client, leases, changes::incrementAndGet);
            cache.start();
            try {
                assertTrue(ZkFixture.await(() -> names(cache).equals(Set.of("mirror-m1")), 10_000), "" + names(cache));

                flaky.failing.set(true);
                ClusterSession m2 = fx.session(name, LEASE_MILLIS);
                MirrorLeases.hold(m2, "m2", null);
                // the cache read the parent's new stat, then its listing of the children gave up: the parent is
                // stored as current while the child is missing
                int listings = RETRIES + 1;
                assertTrue(ZkFixture.await(() -> flaky.failedListings.get() >= listings, 20_000),
                        "failed listings " + flaky.failedListings.get());
                assertEquals(Set.of("mirror-m1"), names(cache), "the view is stale while the reads fail");

                flaky.failing.set(false);
                long before = cache.reloads();
                client.getZookeeperClient().getZooKeeper().getTestable().closeSocket();
                boolean converged = ZkFixture.await(() -> names(cache).equals(Set.of("mirror-m1", "mirror-m2")),
                        15_000);
                System.out.printf("view after reconnection: %s, reloads %d -> %d, failed reads %d, listings %d%n",
                        names(cache), before, cache.reloads(), flaky.failedReads.get(), flaky.failedListings.get());
                assertTrue(converged, "the view converges to ZooKeeper's state: " + names(cache));
                assertTrue(cache.reloads() > before, "a reload put the fresh view in use");
                assertTrue(changes.get() > 0, "the change was reported");
            } finally {
                cache.close();
            }
        }
    }

    private static Set<String> names(ReloadingCache cache) {
        Set<String> names = new TreeSet<>();
        cache.stream().map(d -> d.getPath().substring(d.getPath().lastIndexOf('/') + 1))
                .filter(n -> n.startsWith("mirror-")).forEach(names::add);
        return names;
    }

    private static CuratorFramework flakyClient(FlakyReads flaky) {
        return CuratorFrameworkFactory.builder()
                .connectString(fx.zk.connectString())
                .sessionTimeoutMs(LEASE_MILLIS)
                .connectionTimeoutMs(LEASE_MILLIS)
                .retryPolicy(new ExponentialBackoffRetry(20, RETRIES))
                .ensembleTracker(false)
                .zookeeperFactory((connect, timeout, watcher, readOnly) -> flaky.open(connect, timeout, watcher))
                .build();
    }

    /**
     * While {@link #failing}: every listing of children, and every read of a node's data below {@code root}, answers
     * {@code CONNECTIONLOSS} without reaching the server (the parent's own data still reads).
     */
    private static final class FlakyReads {
        final AtomicBoolean failing = new AtomicBoolean();
        final AtomicInteger failedReads = new AtomicInteger();
        final AtomicInteger failedListings = new AtomicInteger();
        private final String root;

        FlakyReads(String root) {
            this.root = root;
        }

        ZooKeeper open(String connect, int timeout, Watcher watcher) throws IOException {
            return new ZooKeeper(connect, timeout, watcher) {
                @Override
                public void getData(String path, Watcher w, AsyncCallback.DataCallback cb, Object ctx) {
                    if (failing.get() && !path.equals(root)) {
                        failedReads.incrementAndGet();
                        cb.processResult(KeeperException.Code.CONNECTIONLOSS.intValue(), path, ctx, null, null);
                        return;
                    }
                    super.getData(path, w, cb, ctx);
                }

                @Override
                public void getChildren(String path, Watcher w, AsyncCallback.Children2Callback cb, Object ctx) {
                    if (failing.get()) {
                        failedListings.incrementAndGet();
                        cb.processResult(KeeperException.Code.CONNECTIONLOSS.intValue(), path, ctx, null, null);
                        return;
                    }
                    super.getChildren(path, w, cb, ctx);
                }
            };
        }
    }
}
