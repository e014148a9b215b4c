package io.asymnvm.frontend;

import io.asymnvm.core.fabric.EmbeddedBackend;
import io.asymnvm.core.fabric.Fabric;
import io.asymnvm.core.fabric.FabricCounters;
import io.asymnvm.core.fabric.FabricProviders;
import io.asymnvm.core.fabric.tcp.TcpFabric;
import io.asymnvm.frontend.link.BackendLink;
import io.asymnvm.frontend.tx.ArgumentClasses;
import io.asymnvm.frontend.tx.EngineStats;
import io.asymnvm.frontend.tx.MethodRegistry;
import io.asymnvm.frontend.tx.TransactionEngine;
import io.asymnvm.frontend.tx.TransactionalProxy;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.layout.ControlMessageLayout;
import io.asymnvm.core.layout.RootDirectoryLayout;
import io.asymnvm.frontend.roots.NamedRoots;
import io.asymnvm.frontend.roots.RootDirectory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

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
    private static final Logger LOG = LoggerFactory.getLogger(AsymNvm.class);
    private final TransactionEngine engine;
    private final MethodRegistry registry;
    private final Fabric fabric;
    private final EmbeddedBackend embedded;
    private final boolean ownsFabric;
    private final NamedRoots namedRoots;

    private AsymNvm(Fabric fabric, int frontendId, FrontendOptions options, EmbeddedBackend embedded,
                    boolean ownsFabric) {
        this.fabric = fabric;
        this.embedded = embedded;
        this.ownsFabric = ownsFabric;
        this.registry = new MethodRegistry(frontendId);
        this.engine = new TransactionEngine(new BackendLink(fabric, frontendId, options.reconnectTimeoutMillis(),
                embedded == null ? secretOf(options, frontendId) : null),
                options, registry);
        this.namedRoots = transactional(NamedRoots.class, new RootDirectory(RootDirectory.factories()));
    }

    /** This frontend's secret from the configured credentials file (validated), or null when none is set. */
    private static byte[] secretOf(FrontendOptions options, int frontendId) {
        Path file = options.credentials();
        return file == null ? null : io.asymnvm.core.auth.FrontendCredentials.load(file).secret(frontendId);
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
        TcpFabric fabric = new TcpFabric(host, port, options.tls());
        try {
            return new AsymNvm(fabric, frontendId, options, null, true);
        } catch (RuntimeException e) {
            fabric.close();
            throw e;
        }
    }

    /**
     * A frontend attached over the fabric named {@code fabric} ("tcp" or "rdma"), selected through
     * {@link FabricProviders}: an rdma that cannot run here (no libdisni, no device, module absent) falls back to
     * tcp with a warning naming why. The frontend owns the fabric.
     */
    public static AsymNvm connect(String fabric, String host, int port, int frontendId, FrontendOptions options) {
        if ("tcp".equalsIgnoreCase(fabric.trim())) {
            return connect(host, port, frontendId, options); // with the options' TLS
        }
        if (options.tls() != null) {
            throw new IllegalArgumentException("TLS is set in the frontend options but fabric '" + fabric
                    + "' does not carry it (TLS applies to the tcp fabric only); refusing to connect in the clear");
        }
        Fabric f = FabricProviders.open(fabric, false, host, port, java.util.Map.of());
        try {
            return new AsymNvm(f, frontendId, options, null, true);
        } catch (RuntimeException e) {
            f.close();
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

    /**
     * Like {@link #transactional(Class, Object)}, for one of several implementations behind the same interface
     * (two stores of one kind, say): each is registered under its own {@code instance} name, which its semantic
     * records carry. Register every instance again, under the same names, before recovery; a record of an
     * instance that is not registered stops recovery with {@code RECOVERY_REQUIRED} naming it.
     */
    public <T> T transactional(Class<T> iface, T implementation, String instance) {
        return TransactionalProxy.create(engine, registry, iface, implementation, instance);
    }

    /**
     * Allows {@code classes} as classes that the arguments of this frontend's transactional calls may contain,
     * beyond the default set and the declared parameter types of the registered methods (which are allowed by
     * {@link #transactional}); see {@link ArgumentClasses} for the rules. Arguments are encoded with their class
     * names into the semantic log and decoded from the backend's PM during recovery, where a class outside the
     * list is never loaded: register here the runtime classes of fields and elements (an argument record holding
     * a {@code List} needs {@code ArrayList.class}, say) and the subclasses passed for a declared type. Call it
     * before the first call and, after a restart, before recovery (in any order: classes are identified by
     * name). A call whose arguments contain a class not allowed fails before anything is logged, and a recovery
     * that meets one stops this frontend's recovery only, both with {@link ErrorCode#CLASS_NOT_REGISTERED} naming
     * the class.
     *
     * @return this frontend, for chaining
     */
    public AsymNvm allowArgumentClasses(Class<?>... classes) {
        for (Class<?> c : classes) {
            registry.argumentClasses().allow(c);
        }
        return this;
    }

    /**
     * Opens the structure named {@code name}, creating it (with a {@link StructureFactory} of {@code type} found on
     * the class path) if this frontend has no root of that name; returns its root address. The name and the
     * structure are created in one transaction. Names are unique per backend: the name is claimed in the backend's
     * catalog first ({@link #checkNameAvailable}), and a name another frontend owns or is creating is refused with
     * {@link ErrorCode#NAME_TAKEN}. Opening a name with another type or codecs is refused with both in the message.
     * Prebuilt structures wrap this ({@code PersistentBTree.open(nvm, name, ...)}).
     */
    public long namedRoot(String name, int type, int keyCodec, int valueCodec) {
        boolean indexed = checkNameAvailable(name, type, keyCodec, valueCodec);
        long address = namedRoots.openOrCreate(name, type, keyCodec, valueCodec);
        if (!indexed) {
            catalogBind(new RootDirectoryLayout.Entry(name, type, keyCodec, valueCodec, address));
        }
        return address;
    }

    /**
     * Refuses {@code name} if another frontend owns it or is creating it, and otherwise claims it for this
     * frontend in the backend's catalog (one control call; atomic on the backend), so that of several frontends
     * creating the same name at the same moment exactly one proceeds and the others fail here, before their
     * creating transaction runs. Structure handles opened by name call this, then create the root lazily inside
     * transactions. Refusals are {@link AsymNvmException}s with {@link ErrorCode#NAME_TAKEN} naming the owner; a
     * name held with another type or codecs is an {@link IllegalArgumentException} naming both.
     *
     * <p>Should a name exist in two frontends' root directories (possible only if a backend crashed between a claim
     * and the creation reaching PM, and another frontend created the name after the restart), the backend reports
     * it by name and each frontend keeps reaching its own structure: a frontend whose own directory holds the name
     * is never refused it.
     *
     * @return whether the catalog already indexed the created root for this frontend (no bind needed)
     */
    public boolean checkNameAvailable(String name, int type, int keyCodec, int valueCodec) {
        RootDirectoryLayout.checkName(name);
        ControlMessageLayout.CatalogEntry indexed = catalogLookup(name);
        if (indexed != null && indexed.owner() != frontendId()) {
            if (ownsInItsDirectory(name, indexed)) {
                return true;
            }
            throw new AsymNvmException(ErrorCode.NAME_TAKEN, "root '" + name + "' "
                    + (indexed.entry().address() == 0 ? "is being created by" : "belongs to") + " frontend "
                    + indexed.owner() + "; this is frontend " + frontendId());
        }
        if (indexed != null) {
            RootDirectoryLayout.Entry e = indexed.entry();
            if (e.type() != type || e.keyCodec() != keyCodec || e.valueCodec() != valueCodec) {
                throw new IllegalArgumentException("root '" + name + "' is type " + e.type() + " with key codec "
                        + e.keyCodec() + " and value codec " + e.valueCodec() + "; opened as type " + type
                        + " with key codec " + keyCodec + " and value codec " + valueCodec);
            }
            if (e.address() != 0) {
                return true;
            }
        }
        try {
            catalogBind(new RootDirectoryLayout.Entry(name, type, keyCodec, valueCodec, 0));
        } catch (AsymNvmException e) {
            if (e.errorCode() == ErrorCode.NAME_TAKEN && ownsInItsDirectory(name, null)) {
                return true;
            }
            throw e;
        }
        return false;
    }

    /** Whether this frontend's own root directory holds {@code name} although the catalog names another owner. */
    private boolean ownsInItsDirectory(String name, ControlMessageLayout.CatalogEntry indexed) {
        if (namedRoots.find(name) == null) {
            return false;
        }
        LOG.error("root '{}' is in this frontend's ({}) root directory, but the catalog resolves it to {}: the name "
                + "was created twice; using this frontend's own", name, frontendId(),
                indexed == null ? "another frontend" : "frontend " + indexed.owner());
        return true;
    }

    /** The backend catalog's entry for {@code name} (null if absent or the catalog is unavailable). */
    public ControlMessageLayout.CatalogEntry catalogLookup(String name) {
        try {
            byte[] reply = engine.controlCall(ControlMessageLayout.catalogRequest(
                    ControlMessageLayout.KIND_CATALOG_LOOKUP, frontendId(), name, 0, 0, 0, 0));
            return ControlMessageLayout.CatalogEntry.decode(name, reply);
        } catch (AsymNvmException e) {
            if (e.errorCode() != ErrorCode.CATALOG_UNAVAILABLE) {
                throw e;
            }
            LOG.warn("catalog unavailable, using this frontend's root directory only: {}", e.detail());
            return null;
        }
    }

    private void catalogBind(RootDirectoryLayout.Entry entry) {
        try {
            engine.controlCall(ControlMessageLayout.catalogRequest(ControlMessageLayout.KIND_CATALOG_BIND,
                    frontendId(), entry.name(), entry.type(), entry.keyCodec(), entry.valueCodec(),
                    entry.address()));
        } catch (AsymNvmException e) {
            if (e.errorCode() != ErrorCode.CATALOG_UNAVAILABLE) {
                throw e;
            }
            LOG.warn("catalog unavailable; '{}' is indexed when the backend next rebuilds its catalog", entry.name());
        }
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

    /**
     * Returns the slabs whose blocks are all free to the backend now, as far as their last writers are applied
     * (otherwise it happens lazily in the background; see {@link FrontendOptions.Builder#returnEmptySlabs}). Returns
     * how many slabs were probed or returned.
     */
    public int returnEmptySlabs() {
        return engine.returnEmptySlabs();
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
