package io.asymnvm.cluster;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.curator.framework.recipes.cache.CuratorCacheListenerBuilder;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link CuratorCache} of a subtree that is loaded afresh after every reconnection to ZooKeeper.
 *
 * <p>Curator 5's cache re-sets its persistent watch on {@link ConnectionState#RECONNECTED} and re-reads the nodes it
 * holds, but a background read that fails (a connection loss once the retry policy gives up) is only logged: the
 * node it was reading stays as it was, and a parent whose stat was already stored is not listed again, so a child
 * created or deleted around the loss can stay missing or present until the next change of that very node. So, on
 * every {@code RECONNECTED}, a new cache is built and started; once it has loaded ({@code initialized}) it replaces
 * the old one, which is closed, and {@code onChange} is called once. Events of the cache in use are passed to
 * {@code onChange} as they come; those of a cache still loading are not (its load is reported once, as a whole),
 * and a load during which a read failed is dropped rather than put in use.
 * A reload that itself meets a connection loss is followed by another {@code RECONNECTED}, hence another reload: the
 * view converges to ZooKeeper's state once the connection holds.
 */
final class ReloadingCache implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ReloadingCache.class);

    private final CuratorFramework client;
    private final String path;
    private final Runnable onChange;
    private final ConnectionStateListener connectionListener = (c, s) -> {
        if (s == ConnectionState.RECONNECTED) {
            reload();
        }
    };
    private final Object lock = new Object();
    private volatile CuratorCache current;
    private CuratorCache loading;
    private boolean closed;
    private long reloads;

    /** A cache of the subtree at {@code path}; {@code onChange} runs on a Curator thread after each change. */
    ReloadingCache(CuratorFramework client, String path, Runnable onChange) {
        this.client = client;
        this.path = path;
        this.onChange = onChange;
        this.current = newCache(true);
    }

    /** Starts loading and watching (call once). */
    void start() {
        synchronized (lock) {
            client.getConnectionStateListenable().addListener(connectionListener);
            current.start();
        }
    }

    /** The nodes as this cache last saw them (from the cache in use; a reload in progress does not show yet). */
    Stream<ChildData> stream() {
        return current.stream();
    }

    /** How many reloads have completed (replaced the cache in use) since the start. */
    long reloads() {
        synchronized (lock) {
            return reloads;
        }
    }

    private CuratorCache newCache(boolean first) {
        AtomicBoolean failed = new AtomicBoolean();
        CuratorCache cache = CuratorCache.builder(client, path).withExceptionHandler(e -> {
            failed.set(true);
            LOG.warn("a read of the cache of {} failed (it is read afresh after the next reconnection): {}", path,
                    e.toString());
        }).build();
        CuratorCacheListenerBuilder b = CuratorCacheListener.builder().forAll((type, before, after) -> {
            if (cache == current) {
                onChange.run();
            }
        });
        if (!first) {
            b.forInitialized(() -> loaded(cache, failed.get()));
        }
        cache.listenable().addListener(b.build());
        return cache;
    }

    private void reload() {
        synchronized (lock) {
            if (closed) {
                return;
            }
            if (loading != null) {
                loading.close();
            }
            LOG.info("reconnected to ZooKeeper: reloading the cache of {}", path);
            loading = newCache(false);
            loading.start();
        }
    }

    private void loaded(CuratorCache cache, boolean failed) {
        CuratorCache old;
        synchronized (lock) {
            if (closed || cache != loading) {
                return;
            }
            if (failed) {
                // a load that missed some nodes is no better than the cache in use: wait for the next reconnection
                loading = null;
                cache.close();
                return;
            }
            old = current;
            current = cache;
            loading = null;
            reloads++;
        }
        old.close();
        onChange.run();
    }

    @Override
    public void close() {
        CuratorCache a;
        CuratorCache b;
        synchronized (lock) {
            if (closed) {
                return;
            }
            closed = true;
            a = current;
            b = loading;
            loading = null;
        }
        client.getConnectionStateListenable().removeListener(connectionListener);
        a.close();
        if (b != null) {
            b.close();
        }
    }
}
