package io.asymnvm.system;

import io.asymnvm.backend.BackendConfiguration;
import io.asymnvm.backend.BackendNode;
import io.asymnvm.core.fabric.Fabric;
import io.asymnvm.frontend.AsymNvm;
import io.asymnvm.frontend.FrontendOptions;
import io.asymnvm.recovery.crash.SimulatedPmRegion;
import io.asymnvm.recovery.crash.SimulatedPowerFailure;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * The bank workload run over simulated PM with the power cut at a chosen persist call, and the recovery checks
 * of DESIGN §2: every acknowledged transfer present, nothing partial (the total is constant), recovery
 * idempotent.
 *
 * <p>A run's worker thread formats a {@link SimulatedPmRegion}, starts a backend node over it, creates the
 * accounts and waits until they are applied; then it arms {@code failAtPersist(base + k)}, runs the same seeded
 * transfers (SYNC commits) and closes cleanly ({@link #runFromFormat} arms the failure before formatting
 * instead, so that it can hit formatting, attach, the slab grant and the creation). The worker knows which
 * transfers were acknowledged (their call returned) and the one in flight. As soon as the region reports the
 * power failure, wherever it surfaced (the worker, the frontend's agent, the replayer), the frontend is crashed
 * and the node torn down: both can only throw now, nothing more reaches the media. A crash image of the region
 * then plays the media after the failure. The persist count {@code k} is counted from the arming, across all
 * threads, so the code point it lands on varies with thread timing between runs; the checks do not depend on
 * where it landed. Runs with an odd crash point, and power cuts during recovery, perturb the timing: the
 * replayer (or, for every other odd point, the frontend's threads) pauses before each persist, so that the
 * other side acts on what it stored, visible but not yet durable.
 *
 * <p>The workload runs over the node's local fabric or, with a tcp {@link Link}, over loopback tcp to the node's
 * emulated NIC: then the power failure also takes the NIC (its event loops, workers and persist lanes stop with the
 * node) and the client connections, and the run requires that no connection and no listening port survived.
 * The recovery whose result is checked runs over the local fabric; the recovery cut by a second power failure runs
 * over the link, so that cut can land in the NIC too (attach, the FLUSH of re-executed and adopted records).
 *
 * <p>Small geometry on purpose (8 MiB image, 16 KiB rings or one page, 64 KiB slabs): the rings wrap and the
 * replayer advances its checkpoint many times within a few hundred transfers, and copying the image is cheap.
 */
final class PowerFailureRig {
    static final int ACCOUNTS = 8;
    static final long INITIAL = 1_000_000;
    static final int PM_SIZE = 8 << 20;
    /** Default ring capacity: a lap every ~150 transfers. */
    static final long RING = 16 << 10;
    /**
     * {@code -Dasymnvm.powerFailure.redoBatchTransactions=N} caps every rig's redo batches at N transactions (0, the
     * default: the frontend's batching). Small batches wrap the redo ring on any machine (with the default, a
     * loaded machine can gather a run in a few batches); with N = 2 the exploration found three recovery bugs
     * after a second power cut during recovery (README "Crash testing"), and the default run has a capped form.
     */
    static final int REDO_BATCH_TRANSACTIONS = Integer.getInteger("asymnvm.powerFailure.redoBatchTransactions", 0);
    private static final long PHASE_TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(60);

    /** One transfer of the plan. */
    record Transfer(int from, int to, long amount) {
        void applyTo(long[] balances) {
            balances[from] -= amount;
            balances[to] += amount;
        }
    }

    /**
     * What one run did: whether power was lost and after how many persists since arming, whether the creation of
     * the accounts was acknowledged, the oracle of the acknowledged transfers, the transfer in flight (or null),
     * and how often the rings wrapped.
     */
    record Run(long crashPoint, boolean powerLost, long persists, boolean created, long[] oracle, int acknowledged,
               Pending pending, ThreadCountingPmRegion region, long semLaps, long redoLaps, String unexpected,
               String fabric) {

        /** The transfers that were posted but not acknowledged when the power failed. */
        String inFlight() {
            return pending.toString();
        }

        /** Where the power failed (thread and code point), for violation reports. */
        String site() {
            return siteOf(region);
        }
    }

    /**
     * What happens around the power failure (issue 7, item 7). {@code PLAIN}: one frontend runs the plan.
     * {@code FRONTEND_CRASH}: the frontend runs half the plan, posts one ASYNC transfer and crashes (its record in
     * the ring, never flushed); a new incarnation recovers it and runs the rest. {@code BACKEND_RESTART}: a third
     * of the plan, then the backend restarts over the same PM (nothing lost, connections fail, the frontend
     * reconnects and re-posts), a third more, then the frontend crash as above and the rest. {@code TWO_THREADS}:
     * two worker threads share one frontend, each running half of the plan. {@code CONNECTION_DROP}: one frontend
     * runs the plan while another thread fails every connection of the fabric three times (after a quarter, half
     * and three quarters of the plan were acknowledged, wherever the frontend is then: often in a commit's FLUSH),
     * the backend staying up: the frontend reconnects with a new session and re-posts. The power cut lands
     * anywhere in it.
     */
    enum Composition {
        PLAIN, FRONTEND_CRASH, BACKEND_RESTART, TWO_THREADS, CONNECTION_DROP
    }

    /**
     * The fabric the workload runs over. {@code LOCAL}: the node's in-process fabric (the frontend's thread runs
     * every FLUSH and control call). {@code TCP_*}: a {@link io.asymnvm.core.fabric.tcp.TcpFabric} to the node's
     * emulated NIC on an ephemeral 127.0.0.1 port, authenticated with the node's credentials, with the NIC's FLUSH
     * placement ({@code -Dasymnvm.nic.flush}, FlushPlacement): {@code inline} (the default: on the connection's
     * event loop while it is alone there, else on the worker pool), {@code lane} (a persist thread per loop) or
     * {@code workers} (always the pool). The recovery of a crash image that is checked runs over the local fabric
     * either way; the one cut by a second power failure ({@link #crashDuringRecovery}) runs over the link.
     */
    enum Link {
        LOCAL(null), TCP_INLINE("inline"), TCP_LANE("lane"), TCP_WORKERS("workers");

        /** The emulated NIC's system property read when a server starts (FlushPlacement.PROPERTY). */
        static final String FLUSH_PLACEMENT_PROPERTY = "asymnvm.nic.flush";

        final String flushPlacement;

        Link(String flushPlacement) {
            this.flushPlacement = flushPlacement;
        }

        boolean tcp() {
            return flushPlacement != null;
        }
    }

    /**
     * The acknowledged oracle and the transfers posted but not yet acknowledged. Ordered (one thread): a recovered
     * state is the oracle plus a prefix of the pending transfers, in posting order (a later one durable without an
     * earlier one is a lost acknowledged ordering). Unordered (two threads): plus any subset.
     */
    static final class Pending {
        private final boolean ordered;
        private final long[] oracle = initialBalances();
        private final List<Transfer> posted = new ArrayList<>();
        private int acknowledged;

        Pending(boolean ordered) {
            this.ordered = ordered;
        }

        synchronized void post(Transfer t) {
            posted.add(t);
        }

        /** {@code t} returned: it and, when ordered, every transfer posted before it are acknowledged. */
        synchronized void acknowledge(Transfer t) {
            int i = posted.indexOf(t);
            List<Transfer> done = ordered ? new ArrayList<>(posted.subList(0, i + 1)) : List.of(t);
            for (Transfer d : done) {
                d.applyTo(oracle);
                posted.remove(d);
                acknowledged++;
            }
        }

        synchronized long[] oracle() {
            return oracle.clone();
        }

        synchronized int acknowledged() {
            return acknowledged;
        }

        /** Every state a recovery may show: the oracle plus each allowed combination of pending transfers. */
        synchronized List<long[]> allowedStates() {
            List<long[]> out = new ArrayList<>();
            int n = posted.size();
            if (ordered) {
                for (int k = 0; k <= n; k++) {
                    out.add(applied(posted.subList(0, k)));
                }
            } else {
                for (int mask = 0; mask < 1 << n; mask++) {
                    List<Transfer> some = new ArrayList<>();
                    for (int i = 0; i < n; i++) {
                        if ((mask & 1 << i) != 0) {
                            some.add(posted.get(i));
                        }
                    }
                    out.add(applied(some));
                }
            }
            return out;
        }

        private long[] applied(List<Transfer> ts) {
            long[] b = oracle.clone();
            ts.forEach(t -> t.applyTo(b));
            return b;
        }

        @Override
        public synchronized String toString() {
            return posted.isEmpty() ? "none" : posted.toString();
        }
    }

    private record Frontend(AsymNvm nvm, Accounts accounts, AsyncTransfers async, Ledger ledger) {
    }

    private final BackendConfiguration config;
    private final FrontendOptions options;
    private final Link link;
    /** The workload's node: {@link #config} listening on tcp when the link is tcp. */
    private final BackendConfiguration runConfig;
    /** The workload's frontends: {@link #options} with the node's credentials when the link is tcp. */
    private final FrontendOptions runOptions;
    private final long seed;
    private final long ring;
    private final long pauseNanos;
    private final List<Transfer> plan = new ArrayList<>();
    /** Null: the balances are an array in one block; else the structure that holds them. */
    private final MapAccounts.Kind structure;
    private final Composition composition;
    /** Power cuts during recovery that landed inside a request the tcp emulated NIC received, and where. */
    private final AtomicLong recoveryCutsOverTcp = new AtomicLong();
    private final Set<String> recoveryTcpPoints = new ConcurrentSkipListSet<>();

    PowerFailureRig(Path dir, long seed, int transfers) {
        this(dir, seed, transfers, RING);
    }

    /** {@code ring}: capacity of both rings; one page makes the frontend wait for ring space all the time. */
    PowerFailureRig(Path dir, long seed, int transfers, long ring) {
        this(dir, seed, transfers, ring, null);
    }

    /** The same bank with its balances in a persistent B+tree or hash map (1 MiB slabs: node pools need them). */
    PowerFailureRig(Path dir, long seed, int transfers, long ring, MapAccounts.Kind structure) {
        this(dir, seed, transfers, ring, structure, Composition.PLAIN);
    }

    /** The bank in one block, with the power failure composed with other failures. */
    PowerFailureRig(Path dir, long seed, int transfers, Composition composition) {
        this(dir, seed, transfers, RING, null, composition, REDO_BATCH_TRANSACTIONS);
    }

    /** The bank in one block over {@code link}, with the power failure composed with other failures. */
    PowerFailureRig(Path dir, long seed, int transfers, Composition composition, Link link) {
        this(dir, seed, transfers, RING, null, composition, REDO_BATCH_TRANSACTIONS, link);
    }

    /**
     * As above with redo batches of at most {@code redoBatchTransactions} transactions (0: the frontend's default):
     * many small batches, so the redo ring wraps many times, and a recovering session's batches often end where a
     * crashed session's begin (what found the stale records that attach now invalidates, FrontendLog).
     */
    PowerFailureRig(Path dir, long seed, int transfers, Composition composition, int redoBatchTransactions) {
        this(dir, seed, transfers, RING, null, composition, redoBatchTransactions);
    }

    private PowerFailureRig(Path dir, long seed, int transfers, long ring, MapAccounts.Kind structure,
                            Composition composition) {
        this(dir, seed, transfers, ring, structure, composition, REDO_BATCH_TRANSACTIONS);
    }

    private PowerFailureRig(Path dir, long seed, int transfers, long ring, MapAccounts.Kind structure,
                            Composition composition, int perBatch) {
        this(dir, seed, transfers, ring, structure, composition, perBatch, Link.LOCAL);
    }

    private PowerFailureRig(Path dir, long seed, int transfers, long ring, MapAccounts.Kind structure,
                            Composition composition, int perBatch, Link link) {
        this.link = link;
        this.structure = structure;
        this.composition = composition;
        this.seed = seed;
        this.ring = ring;
        this.pauseNanos = TimeUnit.MICROSECONDS.toNanos(300);
        this.config = geometry(dir, ring, structure).conclude();
        // frequent polls of the checkpoint: more chances to act on what the replayer just stored
        FrontendOptions.Builder b = FrontendOptions.builder().reconnectTimeoutMillis(2_000).pollIntervalMicros(100);
        if (perBatch > 0) {
            b.redoBatch(perBatch, 256 << 10, 1000);
        }
        this.options = b.conclude();
        if (link.tcp()) {
            Path credentials = dir.resolve("tcp.credentials"); // written by the first node that listens
            this.runConfig = geometry(dir, ring, structure).bindHost(LoopbackTcpFabrics.HOST).port(0)
                    .credentials(credentials).conclude();
            this.runOptions = options.withCredentials(credentials);
        } else {
            this.runConfig = config;
            this.runOptions = options;
        }
        addTransfers(new Random(seed), transfers);
    }

    private static BackendConfiguration.Builder geometry(Path dir, long ring, MapAccounts.Kind structure) {
        return BackendConfiguration.builder(dir.resolve("simulated.pm")).size(PM_SIZE).maxFrontends(2)
                .semRingCapacity(ring).redoRingCapacity(ring).slabSize(structure == null ? 64 << 10 : 1 << 20);
    }

    private void addTransfers(Random random, int n) {
        for (int i = 0; i < n; i++) {
            plan.add(new Transfer(random.nextInt(ACCOUNTS), random.nextInt(ACCOUNTS), 1 + random.nextInt(1000)));
        }
    }

    /**
     * Doubles the plan with more transfers of the same seed. For a dry run whose redo did not wrap the ring: when
     * the frontend gathers many transfers per redo batch, the batch rewrites the 8 balances in place and a transfer
     * costs little more than its commit entry, so how much redo a plan makes depends on the run's timing.
     */
    void lengthenPlan() {
        addTransfers(new Random(seed * 31 + plan.size()), plan.size());
    }

    int transfers() {
        return plan.size();
    }

    long seed() {
        return seed;
    }

    /** Power cuts during a recovery over tcp ({@link #crashDuringRecovery}) inside a request the NIC received. */
    long recoveryCutsOverTcp() {
        return recoveryCutsOverTcp.get();
    }

    /** The code points (thread role and frames) of those cuts. */
    Set<String> recoveryTcpPoints() {
        return Set.copyOf(recoveryTcpPoints);
    }

    static long[] initialBalances() {
        long[] b = new long[ACCOUNTS];
        Arrays.fill(b, INITIAL);
        return b;
    }

    /**
     * Runs the workload with the power cut at persist {@code crashPoint} counted from the moment the accounts
     * are created and applied; {@code crashPoint < 0} runs it to the end (the dry run).
     */
    Run run(long crashPoint) {
        return run(crashPoint, false);
    }

    /**
     * Runs the workload with the power cut at persist {@code crashPoint} counted from the blank region: the
     * failure may hit formatting, attach, the slab grant or the creation of the accounts.
     */
    Run runFromFormat(long crashPoint) {
        return run(crashPoint, true);
    }

    private Run run(long crashPoint, boolean fromFormat) {
        ThreadCountingPmRegion region = new ThreadCountingPmRegion("simulated PM (seed " + seed + ", crash point "
                + crashPoint + (fromFormat ? " from format" : "") + ")", PM_SIZE);
        if (fromFormat && crashPoint >= 0) {
            region.failAtPersist(crashPoint);
        }
        if ((crashPoint & 3) == 1) {
            region.perturbPersists(PowerFailureRig::isReplayer, 1, pauseNanos);
        } else if ((crashPoint & 3) == 3) {
            region.perturbPersists(t -> !isReplayer(t), 1, pauseNanos);
        }
        AtomicReference<BackendNode> node = new AtomicReference<>();
        AtomicReference<Frontend> fe = new AtomicReference<>();
        LoopbackTcpFabrics tcp = link.tcp() ? new LoopbackTcpFabrics() : null;
        RestartableFabric fabric = new RestartableFabric(() -> tcp == null ? node.get().localFabric()
                : tcp.fabricTo(node.get()));
        AtomicReference<String> fabricName = new AtomicReference<>();
        long[] base = {0};
        AtomicBoolean created = new AtomicBoolean();
        Pending pending = new Pending(composition != Composition.TWO_THREADS);
        AtomicReference<String> unexpected = new AtomicReference<>();
        Thread worker = new Thread(() -> {
            try {
                node.set(startNode(region));
                fabricName.set(fabric.name());
                fe.set(open(fabric));
                Frontend f = fe.get();
                f.accounts().create(ACCOUNTS, INITIAL);
                created.set(true);
                f.nvm().sync();
                synchronized (region) { // no persist can slip in between reading the count and arming
                    base[0] = region.persistCount();
                    if (!fromFormat && crashPoint >= 0) {
                        region.failAtPersist(base[0] + crashPoint);
                    }
                }
                Frontend last = workload(f, fe, node, region, fabric, pending, unexpected);
                last.nvm().close();
                node.get().close();
            } catch (Throwable t) {
                if (!region.powerLost() && SimulatedPowerFailure.findIn(t) == null) {
                    unexpected.compareAndSet(null, "workload failed without a power failure: " + describe(t));
                }
            }
        }, "bank-worker-" + crashPoint);
        worker.start();
        if (!awaitUntil(() -> !worker.isAlive() || region.powerLost())) {
            unexpected.set("workload hung: " + stackOf(worker));
        }
        // the frontend dies with the power here (one simulated machine); after a clean run both are closed already
        crashQuietly(fe.get());
        closeQuietly(node.get());
        if (!join(worker)) {
            unexpected.set("worker did not stop after the power failure: " + stackOf(worker));
            worker.interrupt();
        }
        crashQuietly(fe.get());
        closeQuietly(node.get());
        if (tcp != null) { // the client side goes down with the machine too; nothing of the server may survive
            String survived = tcp.closeAndCheck();
            if (survived != null) {
                unexpected.compareAndSet(null, survived);
            }
            if (fabricName.get() != null) { // null: the power failed before the node served
                fabricName.set(fabricName.get() + " (" + tcp.connections() + " connections to 127.0.0.1 ports "
                        + tcp.ports() + ")");
            }
        }
        long semLaps = 0;
        long redoLaps = 0;
        if (node.get() != null) {
            semLaps = node.get().frontendLog(0).checkpoint().semHead() / ring;
            redoLaps = node.get().frontendLog(0).checkpoint().redoHead() / ring;
        }
        long persists = region.persistCount() - (fromFormat ? 0 : base[0]);
        return new Run(crashPoint, region.powerLost(), persists, created.get(), pending.oracle(),
                pending.acknowledged(), pending, region, semLaps, redoLaps, unexpected.get(), fabricName.get());
    }

    /** A node for the workload over {@code region}: listening on tcp with this link's FLUSH placement, if tcp. */
    private BackendNode startNode(SimulatedPmRegion region) {
        if (!link.tcp()) {
            return BackendNode.start(config, region);
        }
        // the emulated NIC reads its FLUSH placement from a system property when it starts; the tests of this
        // JVM run one at a time and only this rig sets it, restored at once
        synchronized (Link.class) {
            String before = System.getProperty(Link.FLUSH_PLACEMENT_PROPERTY);
            System.setProperty(Link.FLUSH_PLACEMENT_PROPERTY, link.flushPlacement);
            try {
                return BackendNode.start(runConfig, region);
            } finally {
                if (before == null) {
                    System.clearProperty(Link.FLUSH_PLACEMENT_PROPERTY);
                } else {
                    System.setProperty(Link.FLUSH_PLACEMENT_PROPERTY, before);
                }
            }
        }
    }

    /** Runs the plan as the composition says; returns the frontend that finished it. */
    private Frontend workload(Frontend first, AtomicReference<Frontend> fe, AtomicReference<BackendNode> node,
                              SimulatedPmRegion region, RestartableFabric fabric, Pending pending,
                              AtomicReference<String> unexpected) throws InterruptedException {
        int n = plan.size();
        switch (composition) {
            case PLAIN -> transfers(first, plan, pending);
            case FRONTEND_CRASH -> {
                transfers(first, plan.subList(0, n / 2), pending);
                Frontend second = crashAfterAsyncTransfer(first, plan.get(n / 2), fabric, fe, pending);
                transfers(second, plan.subList(n / 2 + 1, n), pending);
                return second;
            }
            case BACKEND_RESTART -> {
                transfers(first, plan.subList(0, n / 3), pending);
                fabric.restart(() -> {
                    node.get().close();
                    node.set(startNode(region));
                });
                transfers(first, plan.subList(n / 3, 2 * n / 3), pending);
                Frontend second = crashAfterAsyncTransfer(first, plan.get(2 * n / 3), fabric, fe, pending);
                transfers(second, plan.subList(2 * n / 3 + 1, n), pending);
                return second;
            }
            case TWO_THREADS -> {
                List<Thread> threads = new ArrayList<>();
                for (int w = 0; w < 2; w++) {
                    List<Transfer> mine = new ArrayList<>();
                    for (int i = w; i < n; i += 2) {
                        mine.add(plan.get(i));
                    }
                    Thread t = new Thread(() -> {
                        try {
                            transfers(first, mine, pending);
                        } catch (Throwable e) {
                            if (!region.powerLost() && SimulatedPowerFailure.findIn(e) == null) {
                                unexpected.compareAndSet(null, "worker thread failed without a power failure: "
                                        + describe(e));
                            }
                        }
                    }, "bank-worker-" + w);
                    threads.add(t);
                    t.start();
                }
                for (Thread t : threads) {
                    t.join();
                }
                if (region.powerLost()) {
                    throw region.failure();
                }
            }
            case CONNECTION_DROP -> {
                AtomicBoolean done = new AtomicBoolean();
                Thread dropper = new Thread(() -> {
                    for (int i = 1; i <= 3; i++) {
                        int at = i * n / 4;
                        awaitUntil(() -> pending.acknowledged() >= at || done.get() || region.powerLost());
                        if (done.get() || region.powerLost()) {
                            return;
                        }
                        fabric.restart(() -> { }); // the backend stays up: only the connections fail
                    }
                }, "connection-dropper");
                dropper.start();
                try {
                    transfers(first, plan, pending);
                } finally {
                    done.set(true);
                    if (!join(dropper)) {
                        unexpected.compareAndSet(null, "connection dropper did not stop: " + stackOf(dropper));
                    }
                }
            }
            default -> throw new IllegalStateException("unknown composition " + composition);
        }
        return first;
    }

    /** SYNC transfers, each posted then acknowledged when its call returns. */
    private static void transfers(Frontend f, List<Transfer> ts, Pending pending) {
        for (Transfer t : ts) {
            pending.post(t);
            f.accounts().transfer(t.from(), t.to(), t.amount());
            pending.acknowledge(t);
        }
    }

    /**
     * Posts {@code t} as an ASYNC transfer (its record in the ring, not flushed), crashes {@code f}, opens the next
     * incarnation and recovers: {@code t} stays pending until that incarnation's next SYNC transfer returns.
     */
    private Frontend crashAfterAsyncTransfer(Frontend f, Transfer t, RestartableFabric fabric,
                                             AtomicReference<Frontend> fe, Pending pending) {
        pending.post(t);
        f.async().transferLater(t.from(), t.to(), t.amount());
        f.nvm().crash();
        Frontend next = open(fabric);
        fe.set(next);
        next.nvm().recover();
        return next;
    }

    /**
     * Recovers a crash image on a fresh node and checks the invariants against {@code run}; then crashes the
     * recovered frontend without closing it, recovers again and requires the same balances, and commits one
     * more transfer. Returns the recovered balances and the persist calls the first recovery made (node start
     * through the first read), or null after recording a violation.
     */
    Recovered recover(byte[] image, Run run, String where, List<String> violations) {
        SimulatedPmRegion region = new SimulatedPmRegion("recovered " + where, image.clone());
        BackendNode node = null;
        Frontend first = null;
        Frontend second = null;
        try {
            node = BackendNode.start(config, region);
            first = open(node);
            first.nvm().recover();
            long[] balances = first.ledger().balances();
            long persists = region.persistCount();
            String problem = check(balances, run);
            if (problem != null) {
                violations.add(where + ": " + problem);
                return null;
            }
            first.nvm().crash();
            first = null;
            second = open(node);
            second.nvm().recover();
            long[] again = second.ledger().balances();
            if (!Arrays.equals(balances, again)) {
                violations.add(where + ": recovery is not idempotent: after the recovered frontend crashed, "
                        + "recovery gave " + Arrays.toString(again) + ", the first recovery "
                        + Arrays.toString(balances));
                return null;
            }
            if (balances == null) { // the creation was never acknowledged and did not survive: nothing to move
                second.nvm().close();
                second = null;
                return new Recovered(null, persists);
            }
            second.accounts().transfer(0, 1, 1);
            long[] expected = balances.clone();
            new Transfer(0, 1, 1).applyTo(expected);
            long[] after = second.ledger().balances();
            if (!Arrays.equals(expected, after)) {
                violations.add(where + ": a transfer after recovery gave " + Arrays.toString(after) + ", expected "
                        + Arrays.toString(expected));
                return null;
            }
            second.nvm().close();
            second = null;
            return new Recovered(balances, persists);
        } catch (Throwable t) {
            violations.add(where + ": recovery failed: " + describe(t));
            return null;
        } finally {
            crashQuietly(first);
            crashQuietly(second);
            if (node != null) {
                closeQuietly(node);
            }
        }
    }

    /** Balances after recovering an image, and the persist calls that recovery made. */
    record Recovered(long[] balances, long persists) {
    }

    /**
     * Cuts the power again at persist call {@code point} of a recovery of {@code image} (node start, attach,
     * re-execution, reads, clean close), recovers a crash image of that, and requires {@code expected}: the
     * state an uninterrupted recovery of {@code image} reached. Returns whether power was lost during recovery.
     */
    boolean crashDuringRecovery(byte[] image, long point, long[] expected, Random imageRandom, String where,
                                List<String> violations) {
        SimulatedPmRegion region = new SimulatedPmRegion("recovering " + where, image.clone());
        region.failAtPersist(point);
        region.perturbPersists(PowerFailureRig::isReplayer, 1, pauseNanos);
        AtomicReference<BackendNode> node = new AtomicReference<>();
        AtomicReference<Frontend> fe = new AtomicReference<>();
        AtomicReference<String> unexpected = new AtomicReference<>();
        LoopbackTcpFabrics tcp = link.tcp() ? new LoopbackTcpFabrics() : null;
        Thread t = new Thread(() -> {
            try {
                // over the link: a tcp recovery attaches, re-executes and flushes through the emulated NIC
                node.set(tcp == null ? BackendNode.start(config, region) : startNode(region));
                fe.set(tcp == null ? open(node.get()) : open(tcp.fabricTo(node.get())));
                fe.get().nvm().recover();
                fe.get().ledger().balances();
                fe.get().nvm().close();
                node.get().close();
            } catch (Throwable e) {
                if (!region.powerLost() && SimulatedPowerFailure.findIn(e) == null) {
                    unexpected.set("recovery failed without a power failure: " + describe(e));
                }
            }
        }, "recovery-" + point);
        t.start();
        if (!awaitUntil(() -> !t.isAlive() || region.powerLost())) {
            unexpected.set("recovery hung: " + stackOf(t));
        }
        crashQuietly(fe.get());
        if (node.get() != null) {
            closeQuietly(node.get());
        }
        if (!join(t)) {
            unexpected.set("recovery did not stop after the power failure: " + stackOf(t));
            t.interrupt();
        }
        crashQuietly(fe.get());
        if (node.get() != null) {
            closeQuietly(node.get());
        }
        if (tcp != null) {
            String survived = tcp.closeAndCheck();
            if (survived != null) {
                unexpected.compareAndSet(null, survived);
            }
            SimulatedPowerFailure f = region.failure();
            if (f != null && Arrays.stream(f.getStackTrace())
                    .anyMatch(e -> e.getClassName().startsWith("io.asymnvm.core.fabric.tcp."))) {
                recoveryCutsOverTcp.incrementAndGet();
                recoveryTcpPoints.add(ThreadCountingPmRegion.roleOf(threadOf(f)) + pointOf(f));
            }
        }
        String at = where + ", power cut at recovery persist " + point + " (" + siteOf(region) + ")";
        if (unexpected.get() != null) {
            violations.add(at + ": " + unexpected.get());
            return region.powerLost();
        }
        byte[] second = region.crashImage(imageRandom);
        SimulatedPmRegion again = new SimulatedPmRegion("recovered twice " + where, second);
        BackendNode n = null;
        Frontend f = null;
        try {
            n = BackendNode.start(config, again);
            f = open(n);
            f.nvm().recover();
            long[] balances = f.ledger().balances();
            if (!Arrays.equals(expected, balances)) {
                violations.add(at + ": the second recovery gave "
                        + Arrays.toString(balances) + ", an uninterrupted one " + Arrays.toString(expected));
            }
            f.nvm().close();
            f = null;
        } catch (Throwable e) {
            violations.add(at + ": recovery failed: " + describe(e));
        } finally {
            crashQuietly(f);
            if (n != null) {
                closeQuietly(n);
            }
        }
        return region.powerLost();
    }

    /** Null if {@code balances} is a state the run allows, else what is wrong. */
    static String check(long[] balances, Run run) {
        if (balances == null) {
            return run.created() ? "the accounts are gone after recovery" : null;
        }
        long total = Arrays.stream(balances).sum();
        if (total != ACCOUNTS * INITIAL) {
            return "total " + total + " != " + ACCOUNTS * INITIAL + ": a partial transfer is visible; balances "
                    + Arrays.toString(balances) + ", oracle of " + run.acknowledged() + " acknowledged transfers "
                    + Arrays.toString(run.oracle()) + ", in flight " + run.inFlight();
        }
        for (long[] allowed : run.pending().allowedStates()) {
            if (Arrays.equals(balances, allowed)) {
                return null;
            }
        }
        return "balances " + Arrays.toString(balances) + " match neither the " + run.acknowledged()
                + " acknowledged transfers " + Arrays.toString(run.oracle()) + " nor them plus an allowed combination"
                + " of the pending transfers " + run.inFlight() + " (an acknowledged transfer was lost, one was "
                + "applied twice, or a later one survived without an earlier one)";
    }

    private static boolean isReplayer(Thread t) {
        return t.getName().startsWith("asymnvm-replayer");
    }

    /** A frontend of a recovery: over the node's local fabric whatever the link. */
    private Frontend open(BackendNode node) {
        return open(node.localFabric(), options);
    }

    /** A frontend of the workload, over {@code fabric} (the link). */
    private Frontend open(Fabric fabric) {
        return open(fabric, runOptions);
    }

    private Frontend open(Fabric fabric, FrontendOptions options) {
        AsymNvm nvm = AsymNvm.open(fabric, 0, options);
        try {
            if (structure != null) {
                MapAccounts bank = new MapAccounts(structure);
                return new Frontend(nvm, nvm.transactional(Accounts.class, bank), null,
                        nvm.transactional(Ledger.class, bank));
            }
            return new Frontend(nvm, nvm.transactional(Accounts.class, new Accounts.Impl()),
                    nvm.transactional(AsyncTransfers.class, new AsyncTransfers.Impl()),
                    nvm.transactional(Ledger.class, new Ledger.Impl()));
        } catch (RuntimeException e) {
            nvm.crash();
            throw e;
        }
    }

    private static void crashQuietly(Frontend f) {
        if (f != null) {
            f.nvm().crash();
        }
    }

    /** Closes a node whose region may have lost power: a close that can only throw the power failure. */
    private static void closeQuietly(BackendNode node) {
        if (node == null) {
            return;
        }
        try {
            node.close();
        } catch (SimulatedPowerFailure expected) {
            // the node died with the power; its threads are stopped
        }
    }

    static boolean awaitUntil(BooleanSupplier condition) {
        long deadline = System.nanoTime() + PHASE_TIMEOUT_NANOS;
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                return false;
            }
            LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(50));
        }
        return true;
    }

    static boolean join(Thread t) {
        try {
            t.join(TimeUnit.NANOSECONDS.toMillis(PHASE_TIMEOUT_NANOS));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return !t.isAlive();
    }

    static String describe(Throwable t) {
        StringBuilder b = new StringBuilder(t.toString());
        for (Throwable c = t.getCause(); c != null && c != c.getCause(); c = c.getCause()) {
            b.append(" <- ").append(c);
        }
        StackTraceElement[] st = t.getStackTrace();
        for (int i = 0; i < Math.min(6, st.length); i++) {
            b.append("\n      at ").append(st[i]);
        }
        return b.toString();
    }

    /** The thread and the code point (frames of this project) where a region lost power. */
    static String siteOf(SimulatedPmRegion region) {
        SimulatedPowerFailure f = region.failure();
        if (f == null) {
            return "power never failed";
        }
        return "thread " + threadOf(f) + pointOf(f);
    }

    /** The name of the thread whose persist call lost the power. */
    static String threadOf(SimulatedPowerFailure f) {
        return f.getMessage().replaceFirst(".* in thread ", "");
    }

    /** The code point of a power failure: the innermost frames of this project, outside the simulated PM. */
    static String pointOf(SimulatedPowerFailure f) {
        StringBuilder b = new StringBuilder();
        int shown = 0;
        for (StackTraceElement e : f.getStackTrace()) {
            String c = e.getClassName();
            if (c.startsWith("io.asymnvm.") && !c.startsWith("io.asymnvm.recovery.crash")
                    && !c.equals(ThreadCountingPmRegion.class.getName()) && shown++ < 8) {
                b.append(" < ").append(c.replaceFirst(".*\\.", "")).append('.')
                        .append(e.getMethodName()).append(':').append(e.getLineNumber());
            }
        }
        return b.toString();
    }

    static String stackOf(Thread t) {
        StringBuilder b = new StringBuilder(t.getName());
        for (StackTraceElement e : t.getStackTrace()) {
            b.append("\n      at ").append(e);
        }
        return b.toString();
    }
}
