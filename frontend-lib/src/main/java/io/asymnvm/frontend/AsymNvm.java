package io.asymnvm.frontend;

import io.asymnvm.core.fabric.EmbeddedBackend;
import io.asymnvm.core.fabric.Fabric;
import io.asymnvm.core.fabric.FabricCounters;
import io.asymnvm.core.fabric.FabricProviders;
import io.asymnvm.core.fabric.tcp.TcpFabric;
import io.asymnvm.frontend.link.BackendLink;
import io.asymnvm.frontend.link.EpochFence;
import io.asymnvm.frontend.link.MirrorLinks;
import io.asymnvm.frontend.tx.Failover;
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
import java.util.ArrayList;
import java.util.List;
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
    /** SYNC mirrors' fabrics this frontend owns (closed with it); empty without mirrors. */
    private final List<Fabric> ownedMirrorFabrics;

    // ---- SYNC mirrors added at run time (issue 9, addMirror) ----
    private final FrontendOptions options;
    private final EpochFence fence;
    /** Fabrics of mirrors added by endpoint at run time (owned, closed with this frontend). */
    private final List<Fabric> addedMirrorFabrics = new java.util.concurrent.CopyOnWriteArrayList<>();

    private AsymNvm(Fabric fabric, int frontendId, FrontendOptions options, EmbeddedBackend embedded,
                    boolean ownsFabric) {
        this.options = options;
        this.fabric = fabric;
        this.embedded = embedded;
        this.ownsFabric = ownsFabric;
        this.ownedMirrorFabrics = List.of();
        this.registry = new MethodRegistry(frontendId);
        EpochFence fence = new EpochFence(); // refuses a node older than the epoch seen, or a mirror, as backend
        this.fence = fence;
        this.engine = new TransactionEngine(new BackendLink(fabric, frontendId, options.reconnectTimeoutMillis(),
                embedded == null ? secretOf(options, frontendId) : null, "backend", fence, false),
                null, options, registry, new Failover(fence));
        this.namedRoots = transactional(NamedRoots.class, new RootDirectory(RootDirectory.factories()));
    }

    /** With SYNC mirrors (issue 9): {@code mirrorNames.get(i)} names {@code mirrors.get(i)}. */
    private AsymNvm(Fabric fabric, String backendName, List<Fabric> mirrors, List<String> mirrorNames,
                    boolean acceptStandIns, int frontendId, FrontendOptions options, boolean ownsFabrics) {
        this(fabric, backendName, mirrors, mirrorNames, mirrors.size(), acceptStandIns, frontendId, options,
                ownsFabrics);
    }

    /** The first {@code syncCount} of {@code mirrors} are SYNC, the rest ASYNC (issue 9). */
    private AsymNvm(Fabric fabric, String backendName, List<Fabric> mirrors, List<String> mirrorNames,
                    int syncCount, boolean acceptStandIns, int frontendId, FrontendOptions options,
                    boolean ownsFabrics) {
        this.options = options;
        this.fabric = fabric;
        this.embedded = null;
        this.ownsFabric = ownsFabrics;
        this.ownedMirrorFabrics = ownsFabrics ? List.copyOf(mirrors) : List.of();
        this.registry = new MethodRegistry(frontendId);
        byte[] secret = secretOf(options, frontendId);
        EpochFence fence = new EpochFence();
        this.fence = fence;
        List<BackendLink> links = new ArrayList<>();
        for (int i = 0; i < mirrors.size(); i++) {
            links.add(new BackendLink(mirrors.get(i), frontendId, options.mirrorReconnectTimeoutMillis(), secret,
                    mirrorNames.get(i), fence, true));
        }
        this.engine = new TransactionEngine(new BackendLink(fabric, frontendId, options.reconnectTimeoutMillis(),
                secret, backendName, fence, false), new MirrorLinks(links.subList(0, syncCount),
                links.subList(syncCount, links.size()), acceptStandIns), options, registry, new Failover(fence));
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

    /** SPIN callers get a reply-reading loop that polls too (issue 8, goal 5: {@code TcpTransport}). */
    private static boolean spinningCallers(FrontendOptions options) {
        return options.waitPolicy() == io.asymnvm.core.fabric.WaitPolicy.Kind.SPIN;
    }

    /** A frontend with identity {@code frontendId} attached to a backend over the TCP fabric. */
    public static AsymNvm connect(String host, int port, int frontendId) {
        return connect(host, port, frontendId, FrontendOptions.defaults());
    }

    public static AsymNvm connect(String host, int port, int frontendId, FrontendOptions options) {
        TcpFabric fabric = new TcpFabric(host, port, options.tls(), spinningCallers(options));
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

    /**
     * A frontend over any fabric with SYNC mirrors (issue 9; the caller keeps ownership of every fabric). Each
     * mirror is attached at open with the same frontend id and credentials and must replicate the backend's image
     * (same identity and geometry) and answer as a mirror; otherwise the open fails with a typed error naming
     * both. Every semantic record is posted to the backend and every mirror, and a commit returns only once it is
     * durable on all of them (their FLUSHes run in parallel: one round-trip time). If the backend is lost, the
     * frontend resumes on a mirror promoted to backend. Mirror {@code i} is named {@code "mirror-i"} (see
     * {@link #dropMirror}). An empty list is a frontend without mirrors.
     */
    public static AsymNvm open(Fabric backend, List<Fabric> syncMirrors, int frontendId, FrontendOptions options) {
        Objects.requireNonNull(syncMirrors, "syncMirrors");
        if (syncMirrors.isEmpty()) {
            return open(backend, frontendId, options);
        }
        return new AsymNvm(backend, "backend", syncMirrors, indexNames(syncMirrors.size()), false, frontendId,
                options, false);
    }

    /**
     * A frontend with SYNC and ASYNC mirrors (issue 9; the caller keeps ownership of every fabric). SYNC mirrors as
     * in {@link #open(Fabric, List, int, FrontendOptions)}. An ASYNC mirror is attached and checked the same way
     * but never posted to (its backend ships to it, within a bounded lag): the frontend reads its checkpoint and
     * keeps each semantic record until the ASYNC mirror applied it, so if that mirror is promoted the frontend
     * fails over to it, writes every record it kept there again and re-executes what the mirror lacks: while the
     * frontend survives, an ASYNC promotion loses none of its acknowledged commits. A slow ASYNC mirror therefore
     * holds ring space (commits wait for space, as for a slow SYNC mirror), and one that stops answering holds it
     * until {@link #dropMirror} (the cluster follower drops it when the configuration stops listing it in sync).
     * Names: {@code "mirror-i"} for SYNC mirror i, {@code "async-i"} for ASYNC mirror i.
     */
    public static AsymNvm open(Fabric backend, List<Fabric> syncMirrors, List<Fabric> asyncMirrors, int frontendId,
                               FrontendOptions options) {
        Objects.requireNonNull(syncMirrors, "syncMirrors");
        Objects.requireNonNull(asyncMirrors, "asyncMirrors");
        if (asyncMirrors.isEmpty()) {
            return open(backend, syncMirrors, frontendId, options);
        }
        List<Fabric> all = new ArrayList<>(syncMirrors);
        all.addAll(asyncMirrors);
        List<String> names = new ArrayList<>(indexNames(syncMirrors.size()));
        for (int i = 0; i < asyncMirrors.size(); i++) {
            names.add("async-" + i);
        }
        return new AsymNvm(backend, "backend", all, names, syncMirrors.size(), false, frontendId, options, false);
    }

    /**
     * Tests only: like {@link #open(Fabric, List, int, FrontendOptions)} but takes nodes that answer as a backend
     * as mirrors (a second backend node serving a byte copy of the backend's image stands in for a mirror).
     */
    static AsymNvm openWithStandInMirrors(Fabric backend, List<Fabric> standIns, int frontendId,
                                          FrontendOptions options) {
        return new AsymNvm(backend, "backend", standIns, indexNames(standIns.size()), true, frontendId, options,
                false);
    }

    private static List<String> indexNames(int n) {
        List<String> names = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            names.add("mirror-" + i);
        }
        return names;
    }

    /**
     * A frontend attached over the fabric named {@code fabric} ("tcp" or "rdma") to the backend at
     * {@code backend} ("host:port") with the SYNC mirrors at {@code syncMirrors} ("host:port" each, which also
     * names them for {@link #dropMirror}); see {@link #open(Fabric, List, int, FrontendOptions)}. The frontend owns
     * the fabrics.
     */
    public static AsymNvm connect(String fabric, String backend, List<String> syncMirrors, int frontendId,
                                  FrontendOptions options) {
        return connect(fabric, backend, syncMirrors, List.of(), frontendId, options);
    }

    /**
     * {@link #connect(String, String, List, int, FrontendOptions)} with ASYNC mirrors too ("host:port" each; see
     * {@link #open(Fabric, List, List, int, FrontendOptions)}).
     */
    public static AsymNvm connect(String fabric, String backend, List<String> syncMirrors, List<String> asyncMirrors,
                                  int frontendId, FrontendOptions options) {
        Objects.requireNonNull(syncMirrors, "syncMirrors");
        Objects.requireNonNull(asyncMirrors, "asyncMirrors");
        if (syncMirrors.contains(backend) || asyncMirrors.contains(backend)) {
            throw new IllegalArgumentException("backend " + backend + " is also listed as a mirror "
                    + syncMirrors + " " + asyncMirrors);
        }
        List<String> names = new ArrayList<>(syncMirrors);
        names.addAll(asyncMirrors);
        List<Fabric> opened = new ArrayList<>();
        try {
            Fabric b = openFabric(fabric, backend, options);
            opened.add(b);
            for (String m : names) {
                opened.add(openFabric(fabric, m, options));
            }
            return new AsymNvm(b, "backend " + backend, opened.subList(1, opened.size()), names, syncMirrors.size(),
                    false, frontendId, options, true);
        } catch (RuntimeException e) {
            opened.forEach(Fabric::close);
            throw e;
        }
    }

    private static Fabric openFabric(String fabric, String hostPort, FrontendOptions options) {
        int colon = hostPort.lastIndexOf(':');
        int port;
        try {
            port = colon <= 0 ? -1 : Integer.parseInt(hostPort.substring(colon + 1));
        } catch (NumberFormatException e) {
            port = -1;
        }
        if (port < 1 || port > 65_535) {
            throw new IllegalArgumentException("endpoint '" + hostPort + "' is not host:port with a port in "
                    + "[1, 65535]");
        }
        String host = hostPort.substring(0, colon);
        if ("tcp".equalsIgnoreCase(fabric.trim())) {
            return new TcpFabric(host, port, options.tls(), spinningCallers(options));
        }
        if (options.tls() != null) {
            throw new IllegalArgumentException("TLS is set in the frontend options but fabric '" + fabric
                    + "' does not carry it (TLS applies to the tcp fabric only); refusing to connect in the clear");
        }
        return FabricProviders.open(fabric, false, host, port, java.util.Map.of());
    }

    /**
     * Removes the SYNC mirror {@code endpoint} (its name: "host:port", or "mirror-i" for
     * {@link #open(Fabric, List, int, FrontendOptions)}) from this frontend's in-sync set: commits proceed without
     * it from now on, also those waiting for it to come back. Called by an operator or the cluster layer once the
     * mirror is known dead (a SYNC mirror is never silently skipped). Unknown names are refused naming the set.
     */
    public void dropMirror(String endpoint) {
        engine.current().dropMirror(endpoint);
    }

    /**
     * Adds the SYNC mirror at {@code endpoint} ("host:port", reached over the backend's fabric) while this frontend
     * runs (issue 9): it is attached and checked as at open, every retained semantic record is re-posted to it and
     * FLUSHed, and every later commit is durable on it before it is acknowledged. The frontend then declares the
     * mirror SYNC to it, which the mirror needs from every frontend attached to its backend before it reports in
     * sync (and before it may be promoted). Refused with the errors of open, or if it is already a mirror here.
     */
    public void addMirror(String endpoint) {
        Objects.requireNonNull(endpoint, "endpoint");
        Fabric f = openFabric(fabric.name(), endpoint, options);
        addedMirrorFabrics.add(f);
        try {
            addMirror(f, endpoint);
        } catch (RuntimeException e) {
            addedMirrorFabrics.remove(f);
            f.close();
            throw e;
        }
    }

    /** As {@link #addMirror(String)} over a fabric the caller keeps; {@code name} names it for dropMirror. */
    public void addMirror(Fabric mirror, String name) {
        engine.current().addMirror(new BackendLink(mirror, frontendId(), options.mirrorReconnectTimeoutMillis(),
                secretOf(options, frontendId()), name, fence, true));
    }

    /** The SYNC mirrors in sync now, by name (empty without mirrors). */
    public List<String> mirrors() {
        return engine.current().mirrorEndpoints();
    }

    // ---- cluster on ZooKeeper (issue 9): ClusterFollower ----

    /** The configuration this frontend follows, or null when it was not opened with {@link #connectCluster}. */
    private volatile ClusterFollower follower;

    /**
     * A frontend of the cluster {@code cluster} whose configuration lives in the ZooKeeper at {@code zk}
     * ({@code host:port[,host:port...]}) over tcp: attached to the configuration's backend with every SYNC mirror
     * the configuration lists in sync, and following the configuration (see {@link ClusterFollower} for the
     * policy: a mirror dropped by the configuration is dropped here, a promoted mirror is found by the failover
     * path). Set {@link FrontendOptions#reconnectTimeoutMillis()} near the cluster's lease: it is how long the
     * frontend waits for its backend before it looks for a promoted mirror.
     *
     * @throws io.asymnvm.core.AsymNvmException {@code TIMEOUT} when ZooKeeper cannot be reached, {@code BAD_REQUEST}
     *     when the cluster has no configuration, and the errors of {@link #connect(String, String, List, int,
     *     FrontendOptions)}
     */
    public static AsymNvm connectCluster(String zk, String cluster, int frontendId, FrontendOptions options) {
        io.asymnvm.cluster.ClusterSession session = io.asymnvm.cluster.ClusterSession.connect(
                io.asymnvm.cluster.ClusterOptions.of(zk).withClusterName(cluster));
        ClusterFollower follower = new ClusterFollower(session);
        try {
            io.asymnvm.cluster.ClusterConfig c = session.store().read().value();
            AsymNvm nvm = connect("tcp", c.backend().address(), ClusterFollower.syncMirrors(c),
                    ClusterFollower.asyncMirrors(c), frontendId, options);
            nvm.follower = follower;
            follower.follow(nvm);
            return nvm;
        } catch (RuntimeException e) {
            follower.close();
            throw e;
        }
    }

    private void stopFollowing() {
        ClusterFollower f = follower;
        if (f != null) {
            f.close();
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
        return engine.current().counters();
    }

    public EngineStats stats() {
        return engine.current().stats();
    }

    /** How long optimistic writers held the execution lock at commit (issue 8 goal 2); afresh after a failover. */
    public io.asymnvm.frontend.tx.CommitSections.Snapshot commitSections() {
        return engine.current().commitSections();
    }

    /** How many attempts each call took, as a distribution (issue 8 goal 4); counted afresh after a failover. */
    public io.asymnvm.frontend.tx.RunCounts.Snapshot runCounts() {
        return engine.current().runCounts();
    }

    /**
     * Re-executes the transactions a crashed previous incarnation of this frontend committed but the backend had
     * not applied (frontend recovery). Happens automatically before the first transaction; register every
     * transactional interface first. Returns what was done (nothing if there was nothing to recover).
     */
    public TransactionEngine.RecoveryReport recover() {
        return engine.current().recover();
    }

    /** Ships all redo and waits until the backend has applied every committed transaction. */
    public void sync() {
        engine.current().sync();
    }

    /**
     * Returns the slabs whose blocks are all free to the backend now, as far as their last writers are applied
     * (otherwise it happens lazily in the background; see {@link FrontendOptions.Builder#returnEmptySlabs}). Returns
     * how many slabs were probed or returned.
     */
    public int returnEmptySlabs() {
        return engine.current().returnEmptySlabs();
    }

    public int frontendId() {
        return engine.current().frontendId();
    }

    @Override
    public void close() {
        try {
            engine.current().close();
        } finally {
            releaseTransport();
        }
    }

    private void releaseTransport() {
        stopFollowing();
        if (embedded != null) {
            embedded.close();
        } else if (ownsFabric) {
            fabric.close();
        }
        ownedMirrorFabrics.forEach(Fabric::close);
        addedMirrorFabrics.forEach(Fabric::close);
    }

    /** Drops the frontend without flushing or detaching, as a crash of its process would (tests, drills). */
    public void crash() {
        engine.current().abandon();
        releaseTransport();
    }
}
