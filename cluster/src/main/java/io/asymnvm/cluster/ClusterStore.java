package io.asymnvm.cluster;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The cluster configuration record in ZooKeeper ({@link ClusterPaths#config()}). ZooKeeper is the only arbiter:
 * every change is a versioned {@code setData} (compare-and-set on the znode version), so of two writers that read
 * the same version exactly one succeeds, and this class adds the rules a change must obey before it is sent:
 *
 * <ul>
 *   <li>epochs only grow: a record with a lower epoch is refused ({@link ErrorCode#STALE_EPOCH}, both epochs named);
 *   <li>a change of backend needs a higher epoch, so two backends can never claim one epoch
 *       ({@link ErrorCode#STALE_EPOCH});
 *   <li>the image a cluster serves never changes ({@link ErrorCode#IDENTITY_MISMATCH}, both identities named).
 * </ul>
 *
 * The rules are checked against the record at the expected version, and the write is conditional on that version,
 * so the check and the write cannot be separated by another writer.
 */
public final class ClusterStore {
    private static final Logger LOG = LoggerFactory.getLogger(ClusterStore.class);

    private final CuratorFramework client;
    private final ClusterPaths paths;

    ClusterStore(CuratorFramework client, ClusterPaths paths) {
        this.client = client;
        this.paths = paths;
    }

    public ClusterPaths paths() {
        return paths;
    }

    /**
     * Creates the record (and the parent znodes); refused if the cluster already has one.
     *
     * @return the new record at version 0
     */
    public Versioned<ClusterConfig> create(ClusterConfig initial) {
        try {
            client.create().creatingParentsIfNeeded().forPath(paths.config(), initial.toJson());
            return new Versioned<>(initial, 0);
        } catch (KeeperException.NodeExistsException e) {
            String existing = readIfPresent().map(v -> " (epoch " + v.value().epoch() + ", image "
                    + v.value().imageId() + ", backend " + v.value().backend() + ")").orElse("");
            throw new AsymNvmException(ErrorCode.BAD_REQUEST, "cluster configuration " + paths.config()
                    + " already exists" + existing + "; not replaced by epoch " + initial.epoch() + " image "
                    + initial.imageId());
        } catch (Exception e) {
            throw zkFailure("create " + paths.config(), e);
        }
    }

    /** The current record with its znode version. */
    public Versioned<ClusterConfig> read() {
        return readIfPresent().orElseThrow(() -> new AsymNvmException(ErrorCode.BAD_REQUEST,
                "no cluster configuration at " + paths.config() + " (create the cluster first)"));
    }

    /** The current record, or empty when the cluster has none yet. */
    public Optional<Versioned<ClusterConfig>> readIfPresent() {
        Stat stat = new Stat();
        byte[] data;
        try {
            data = client.getData().storingStatIn(stat).forPath(paths.config());
        } catch (KeeperException.NoNodeException e) {
            return Optional.empty();
        } catch (Exception e) {
            throw zkFailure("read " + paths.config(), e);
        }
        return Optional.of(new Versioned<>(ClusterConfig.fromJson(data), stat.getVersion()));
    }

    /**
     * Replaces the record if it is still at {@code expectedVersion}.
     *
     * @return false when another writer changed it first (read again and decide again)
     * @throws AsymNvmException {@link ErrorCode#STALE_EPOCH} if {@code next} lowers the epoch or changes the backend
     *     without raising it; {@link ErrorCode#IDENTITY_MISMATCH} if it names another image
     */
    public boolean compareAndSet(int expectedVersion, ClusterConfig next) {
        Stat stat = new Stat();
        ClusterConfig current;
        try {
            current = ClusterConfig.fromJson(client.getData().storingStatIn(stat).forPath(paths.config()));
        } catch (KeeperException.NoNodeException e) {
            throw new AsymNvmException(ErrorCode.BAD_REQUEST, "no cluster configuration at " + paths.config()
                    + " to compare-and-set");
        } catch (AsymNvmException e) {
            throw e;
        } catch (Exception e) {
            throw zkFailure("read " + paths.config(), e);
        }
        if (stat.getVersion() != expectedVersion) {
            return false;
        }
        checkTransition(current, next);
        try {
            client.setData().withVersion(expectedVersion).forPath(paths.config(), next.toJson());
            return true;
        } catch (KeeperException.BadVersionException e) {
            // Curator retries a setData whose reply was lost to a dropped connection; if the first try landed, the
            // retry meets its own write. The record right after ours, equal to ours, is our write.
            return readIfPresent().map(v -> v.version() == expectedVersion + 1 && v.value().equals(next))
                    .orElse(false);
        } catch (Exception e) {
            throw zkFailure("compare-and-set " + paths.config() + " at version " + expectedVersion, e);
        }
    }

    /**
     * Read, change, compare-and-set, again on a conflict (at most {@code maxTries} rounds): for changes that are
     * valid whatever the record became in between (a mirror joins, a mirror's state, a mirror dropped). Not for
     * promotions, whose decision depends on the record read (use {@link #compareAndSet}).
     *
     * @return the record written, with its version
     * @throws AsymNvmException {@link ErrorCode#TIMEOUT} after {@code maxTries} lost races; the rules' errors as
     *     {@link #compareAndSet}
     */
    public Versioned<ClusterConfig> update(UnaryOperator<ClusterConfig> change, int maxTries) {
        if (maxTries < 1) {
            throw new IllegalArgumentException("tries must be positive: " + maxTries);
        }
        for (int i = 0; i < maxTries; i++) {
            Versioned<ClusterConfig> current = read();
            ClusterConfig next = change.apply(current.value());
            if (next.equals(current.value())) {
                return current;
            }
            if (compareAndSet(current.version(), next)) {
                return new Versioned<>(next, current.version() + 1);
            }
        }
        throw new AsymNvmException(ErrorCode.TIMEOUT, "cluster configuration " + paths.config() + " changed under "
                + maxTries + " consecutive updates; giving up");
    }

    /** The rules every change obeys (see the class comment). */
    static void checkTransition(ClusterConfig current, ClusterConfig next) {
        if (!next.imageId().equals(current.imageId())) {
            throw new AsymNvmException(ErrorCode.IDENTITY_MISMATCH, "cluster serves image " + current.imageId()
                    + "; a configuration for image " + next.imageId() + " is refused");
        }
        if (next.epoch() < current.epoch()) {
            throw new AsymNvmException(ErrorCode.STALE_EPOCH, "epochs only grow: cluster is at epoch "
                    + current.epoch() + ", proposed epoch " + next.epoch());
        }
        if (!next.backend().equals(current.backend()) && next.epoch() <= current.epoch()) {
            throw new AsymNvmException(ErrorCode.STALE_EPOCH, "backend " + next.backend() + " claims epoch "
                    + next.epoch() + " but backend " + current.backend() + " holds epoch " + current.epoch()
                    + ": a new backend needs a higher epoch");
        }
    }

    /**
     * Calls {@code listener} with the current record and then with each new one, on a Curator thread (keep it
     * short). ZooKeeper watches are one-shot, so of several changes in quick succession only the latest may be seen;
     * a record that fails to decode is logged and skipped. Close the returned handle to stop.
     */
    public Watch watch(Consumer<ClusterConfig> listener) {
        CuratorCache cache = CuratorCache.build(client, paths.config(), CuratorCache.Options.SINGLE_NODE_CACHE);
        cache.listenable().addListener(CuratorCacheListener.builder()
                .forCreatesAndChanges((before, after) -> {
                    ClusterConfig config;
                    try {
                        config = ClusterConfig.fromJson(after.getData());
                    } catch (AsymNvmException e) {
                        LOG.error("ignoring an unreadable cluster configuration at {} (version {}): {}",
                                paths.config(), after.getStat().getVersion(), e.getMessage());
                        return;
                    }
                    listener.accept(config);
                })
                .build());
        cache.start();
        return cache::close;
    }

    /**
     * Waits until the configuration's epoch is above {@code epoch} (a frontend whose backend failed, or that was told
     * {@code STALE_EPOCH}, waits here for the promoted backend) and returns that configuration.
     *
     * @throws AsymNvmException {@link ErrorCode#TIMEOUT} naming both epochs when none comes within
     *     {@code timeoutMillis}
     */
    public ClusterConfig awaitEpochAbove(long epoch, long timeoutMillis) {
        if (timeoutMillis < 0) {
            throw new IllegalArgumentException("timeout must not be negative: " + timeoutMillis + " ms");
        }
        BlockingQueue<ClusterConfig> newer = new LinkedBlockingQueue<>();
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        ClusterConfig last = null;
        Watch watch = watch(c -> {
            if (c.epoch() > epoch) {
                newer.add(c);
            }
        });
        try {
            Optional<Versioned<ClusterConfig>> now = readIfPresent();
            if (now.isPresent() && now.get().value().epoch() > epoch) {
                return now.get().value();
            }
            last = now.map(Versioned::value).orElse(null);
            ClusterConfig c = newer.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            if (c != null) {
                return c;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            watch.close();
        }
        throw new AsymNvmException(ErrorCode.TIMEOUT, "no cluster configuration above epoch " + epoch + " within "
                + timeoutMillis + " ms (still at epoch " + (last == null ? "none" : last.epoch()) + ")");
    }

    /** A running watch of the configuration; closing it stops the calls. */
    @FunctionalInterface
    public interface Watch extends AutoCloseable {
        @Override
        void close();
    }

    static AsymNvmException zkFailure(String what, Exception e) {
        if (e instanceof InterruptedException) {
            Thread.currentThread().interrupt();
        }
        return new AsymNvmException(ErrorCode.CONNECTION_LOST, "ZooKeeper failed to " + what + ": " + e, e);
    }
}
