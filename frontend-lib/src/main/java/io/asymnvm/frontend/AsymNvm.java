package io.asymnvm.frontend;

import io.asymnvm.core.fabric.EmbeddedBackend;
import io.asymnvm.core.fabric.Fabric;
import io.asymnvm.core.fabric.FabricCounters;
import io.asymnvm.core.fabric.tcp.TcpFabric;
import io.asymnvm.frontend.link.BackendLink;
import io.asymnvm.frontend.tx.EngineStats;
import io.asymnvm.frontend.tx.MethodRegistry;
import io.asymnvm.frontend.tx.TransactionEngine;
import io.asymnvm.frontend.tx.TransactionalProxy;

import java.nio.file.Path;
import java.util.Objects;

/**
 * Entry point of the client library: a frontend attached to one backend.
 *
 * <pre>{@code
 * try (AsymNvm nvm = AsymNvm.embedded(Path.of("/dev/shm/bank"))) {
 *     Bank bank = nvm.transactional(Bank.class, new BankImpl());
 *     bank.transfer(1, 2, 100);   // returns once durable: one round trip
 * }
 * }</pre>
 *
 * Thread-safe: any number of threads may call transactional proxies concurrently (they serialize on the
 * frontend's execution lock, which is never held across a network round trip). {@link #close()} ships and applies
 * everything and detaches cleanly.
 */
public final class AsymNvm implements AutoCloseable {
    private final TransactionEngine engine;
    private final MethodRegistry registry = new MethodRegistry();
    private final Fabric fabric;
    private final EmbeddedBackend embedded;
    private final boolean ownsFabric;

    private AsymNvm(Fabric fabric, int frontendId, FrontendOptions options, EmbeddedBackend embedded,
                    boolean ownsFabric) {
        this.fabric = fabric;
        this.embedded = embedded;
        this.ownsFabric = ownsFabric;
        this.engine = new TransactionEngine(new BackendLink(fabric, frontendId, options.reconnectTimeoutMillis()),
                options, registry);
    }

    /** A frontend (id 0) with its backend in this JVM, PM image in {@code directory}, over the local fabric. */
    public static AsymNvm embedded(Path directory) {
        return embedded(directory, FrontendOptions.defaults());
    }

    public static AsymNvm embedded(Path directory, FrontendOptions options) {
        Objects.requireNonNull(directory, "directory");
        EmbeddedBackend backend = EmbeddedBackend.factory().open(directory, options.embeddedSizeBytes());
        try {
            return new AsymNvm(backend.fabric(), 0, options, backend, false);
        } catch (RuntimeException e) {
            backend.close();
            throw e;
        }
    }

    /** A frontend with identity {@code frontendId} attached to a backend over the TCP fabric. */
    public static AsymNvm connect(String host, int port, int frontendId) {
        return connect(host, port, frontendId, FrontendOptions.defaults());
    }

    public static AsymNvm connect(String host, int port, int frontendId, FrontendOptions options) {
        TcpFabric fabric = new TcpFabric(host, port);
        try {
            return new AsymNvm(fabric, frontendId, options, null, true);
        } catch (RuntimeException e) {
            fabric.close();
            throw e;
        }
    }

    /** A frontend over any fabric (the caller keeps ownership of {@code fabric}). */
    public static AsymNvm open(Fabric fabric, int frontendId, FrontendOptions options) {
        return new AsymNvm(fabric, frontendId, options, null, false);
    }

    /**
     * Returns a proxy of {@code iface} whose {@link PersistentTransaction} methods run as persistent transactions
     * on {@code implementation}. Registers the methods' identities (64-bit signature hashes) with this frontend;
     * registering the same method twice is refused.
     */
    public <T> T transactional(Class<T> iface, T implementation) {
        return TransactionalProxy.create(engine, registry, iface, implementation);
    }

    /** Fabric counters over every connection this frontend used. */
    public FabricCounters.Snapshot counters() {
        return engine.counters();
    }

    public EngineStats stats() {
        return engine.stats();
    }

    /**
     * Re-executes the transactions a crashed previous incarnation of this frontend committed but the backend had
     * not applied (frontend recovery). Happens automatically before the first transaction; register every
     * transactional interface first. Returns what was done (nothing if there was nothing to recover).
     */
    public TransactionEngine.RecoveryReport recover() {
        return engine.recover();
    }

    /** Ships all redo and waits until the backend has applied every committed transaction. */
    public void sync() {
        engine.sync();
    }

    public int frontendId() {
        return engine.frontendId();
    }

    @Override
    public void close() {
        try {
            engine.close();
        } finally {
            releaseTransport();
        }
    }

    private void releaseTransport() {
        if (embedded != null) {
            embedded.close();
        } else if (ownsFabric) {
            fabric.close();
        }
    }

    /** Drops the frontend without flushing or detaching, as a crash of its process would (tests, drills). */
    public void crash() {
        engine.abandon();
        releaseTransport();
    }
}
