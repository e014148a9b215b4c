package io.asymnvm.examples.drill;

import io.asymnvm.backend.InspectReport;
import io.asymnvm.backend.InspectTool;
import io.asymnvm.examples.drill.CliProcess.Line;
import io.asymnvm.examples.support.ScratchDirectory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Random;
import java.util.concurrent.TimeUnit;

/**
 * A crash drill on real processes (issue 4, item 5): a backend JVM ({@code asymnvm drill-backend}) serving a PM
 * file in a scratch directory on loopback, and a frontend worker JVM ({@code asymnvm drill-worker}, see
 * {@link DrillWorker}) running bank transfers against it, both with this JVM's class path. The drill reads every
 * line the worker prints and keeps a {@link BankOracle} of the acknowledged transfers.
 *
 * <p><b>Frontend kills.</b> Each iteration lets the worker acknowledge a seeded random number of transfers (0 to
 * {@code maxAcks}), SIGKILLs it, reads whatever it printed before dying, starts a new worker (which recovers and
 * prints its balances) and verifies them: equal to the oracle, or to the oracle plus the one transfer that had
 * begun without an acknowledgement (it is then counted as committed). At the end the worker stops cleanly and a
 * verify-only worker checks the bank once more.
 *
 * <p><b>Backend kills.</b> One worker runs throughout (its frontend reconnects by itself). Each iteration lets it
 * acknowledge 1 to {@code maxAcks} more transfers, SIGKILLs the backend and restarts it on the same file and port.
 * At the end the worker must acknowledge again (it reconnected), stops and closes cleanly, the backend is killed
 * and restarted once more, and a verify-only worker reads the balances, which must equal the oracle.
 *
 * <p>One restart in {@value #EARLY_KILL_ONE_IN} is SIGKILLed again before it reports ready (after a random part of
 * its usual start time), so kills also land in JVM start, attach and recovery itself, which must be idempotent.
 * After every kill the PM file is checked with {@link InspectTool} (read-only, so also beside a running backend);
 * its heap is walked ({@code inspect --deep}) after every backend kill and after the clean stop at the end, when
 * no backend serves it.
 *
 * <p>Every wait has the iteration's deadline; a child that misses it is killed by its PID and counted as a
 * violation, and the drill ends. Only processes this drill started are ever signalled, and they exit by
 * themselves when the drill's JVM dies (their standard input closes). The scratch directory is removed afterwards
 * unless {@link Settings#keep()}.
 */
public final class Drill {
    /** Which process the drill kills. */
    public enum Target {
        FRONTEND, BACKEND,
        /** A SYNC mirror of a cluster on ZooKeeper (always permanent: a fresh mirror replaces it). */
        MIRROR,
        /** The cluster's ZooKeeper (a child JVM, restarted on its data directory); see {@link #zookeeperLosses}. */
        ZOOKEEPER;

        public String cliName() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /**
     * What to run.
     *
     * @param maxAcks           most acknowledged transfers between two kills
     * @param iterationSeconds  deadline of one iteration (start, transfers, kill, restart, recovery, check)
     * @param pmSize            size of the backend's PM file (sparse, in a scratch directory)
     * @param keep              keep the scratch directory (PM file, logs, a transcript of every child's output)
     * @param permanent         backend kills only: the backend is lost for good (its PM file deleted) and its
     *                          mirror is promoted through ZooKeeper ({@link #backendLosses})
     * @param leaseMillis       with {@code permanent}: every node's lease (ZooKeeper session timeout)
     * @param mirrors           SYNC mirrors of a ZooKeeper drill ({@code --kill zookeeper}); the other cluster drills
     *                          run one
     */
    public record Settings(Target target, int iterations, long seed, int accounts, long initialBalance, int maxAcks,
                           long iterationSeconds, String pmSize, boolean keep, boolean permanent,
                           int leaseMillis, int mirrors) {
        public Settings {
            Objects.requireNonNull(target, "target");
            Objects.requireNonNull(pmSize, "pmSize");
            if (mirrors < 1 || mirrors > MAX_MIRRORS) {
                throw new IllegalArgumentException("mirrors " + mirrors + " is outside [1, " + MAX_MIRRORS + "]");
            }
        }

        /** One mirror. */
        public Settings(Target target, int iterations, long seed, int accounts, long initialBalance, int maxAcks,
                        long iterationSeconds, String pmSize, boolean keep, boolean permanent, int leaseMillis) {
            this(target, iterations, seed, accounts, initialBalance, maxAcks, iterationSeconds, pmSize, keep,
                    permanent, leaseMillis, 1);
        }
    }

    /** Most SYNC mirrors a ZooKeeper drill runs. */
    public static final int MAX_MIRRORS = 2;

    static final int FRONTEND_ID = 0;
    static final String HOST = "127.0.0.1";
    static final long RECONNECT_TIMEOUT_MILLIS = 60_000;
    static final int REDO_BATCH_TRANSACTIONS = 128;
    static final long REDO_MAX_DELAY_MICROS = 100_000;
    /** One restart in this many is killed again before it reports ready. */
    static final int EARLY_KILL_ONE_IN = 4;
    private static final long STOP_SECONDS = 20;

    private final Settings settings;
    private final Random random;
    private final BankOracle oracle;
    private final DrillReport report;
    private final Path dir;
    private Path pm;
    private final Path backendLog;
    private final Path workerLog;
    private final int port;
    private final long iterationNanos;
    private final List<CliProcess> children = new ArrayList<>();
    private CliProcess backend;
    private int incarnations;
    /** The transfer a killed worker had begun without an acknowledgement, until a recovered bank resolves it. */
    private Transfer inDoubt;
    private double typicalWorkerStartMillis;
    private double typicalBackendStartMillis;

    private Drill(Settings settings) {
        this.settings = settings;
        this.random = new Random(settings.seed());
        this.oracle = new BankOracle(settings.accounts(), settings.initialBalance());
        this.report = new DrillReport(settings.target(), settings.seed(), settings.accounts(), settings.iterations());
        this.iterationNanos = TimeUnit.SECONDS.toNanos(settings.iterationSeconds());
        this.port = freePort();
        this.dir = ScratchDirectory.create("asymnvm-drill-");
        this.pm = dir.resolve("backend.pm");
        this.backendLog = dir.resolve("backend.log");
        this.workerLog = dir.resolve("worker.log");
    }

    /**
     * Runs a drill; {@code onIteration} is called after each completed iteration (progress). Never throws for a
     * failed check: every problem is a violation in the report.
     */
    public static DrillReport run(Settings settings, Runnable onIteration) {
        Drill d = new Drill(settings);
        Thread hook = new Thread(d::killChildren, "asymnvm-drill-cleanup");
        Runtime.getRuntime().addShutdownHook(hook);
        try {
            if (settings.target() == Target.FRONTEND) {
                d.frontendKills(onIteration);
            } else if (settings.target() == Target.MIRROR) {
                d.mirrorLosses(onIteration);
            } else if (settings.target() == Target.ZOOKEEPER) {
                d.zookeeperLosses(onIteration);
            } else if (settings.permanent()) {
                d.backendLosses(onIteration);
            } else {
                d.backendKills(onIteration);
            }
        } catch (DrillFailure e) {
            d.report.violation(e.getMessage());
        } catch (RuntimeException e) {
            d.report.violation("drill stopped by " + e);
        } finally {
            d.finish();
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException shuttingDown) {
                // the hook runs anyway
            }
        }
        if (settings.keep()) {
            d.report.keptDirectory = d.dir.toString();
        }
        return d.report;
    }

    private void frontendKills(Runnable onIteration) {
        startBackend();
        Worker worker = new Worker(false, "the first start");
        worker.awaitStartup(deadline());
        for (int i = 1; i <= settings.iterations(); i++) {
            long deadline = deadline();
            worker.awaitAcks(random.nextInt(settings.maxAcks() + 1), deadline);
            String when = String.format(Locale.ROOT, "iteration %d (worker pid %d SIGKILLed after %d acks)", i,
                    worker.proc.pid(), worker.acks);
            kill(worker, deadline, when);
            long early = earlyKillNanos(typicalWorkerStartMillis);
            worker = new Worker(false, when);
            if (early > 0 && !worker.proc.outputWithin(early)) {
                String again = when + ", then worker pid " + worker.proc.pid() + " SIGKILLed during its start";
                kill(worker, deadline, again);
                report.earlyKills++;
                worker = new Worker(false, again);
            }
            worker.awaitStartup(deadline);
            report.recovery(worker.recoveredMillis);
            report.recoveredTransactions += worker.recoveredTransactions;
            report.iterations++;
            onIteration.run();
        }
        worker.stop(deadline());
        verifyOnly("the clean close after the last iteration");
    }

    /**
     * SIGKILLs a worker, takes in every line it printed before dying, and inspects the PM file. If the worker got
     * as far as its balances (which were verified then), the transfer it had begun without an acknowledgement is
     * now the one in doubt; otherwise the previous one stays in doubt.
     */
    private void kill(Worker worker, long deadline, String when) {
        worker.proc.kill();
        worker.drain(deadline);
        if (worker.balances != null) {
            inDoubt = worker.begun;
        }
        inspect(when);
    }

    private void backendKills(Runnable onIteration) {
        startBackend();
        Worker worker = new Worker(false, "the first start");
        worker.awaitStartup(deadline());
        for (int i = 1; i <= settings.iterations(); i++) {
            long deadline = deadline();
            awaitSomeAcks(worker, deadline);
            backend.kill();
            String when = String.format(Locale.ROOT, "iteration %d (backend pid %d SIGKILLed)", i, backend.pid());
            inspect(when);
            deepInspect(when); // nothing serves the image until the restart: its heap can be walked
            long early = earlyKillNanos(typicalBackendStartMillis);
            if (early > 0) {
                CliProcess p = spawnBackend();
                if (!p.outputWithin(early)) {
                    p.kill();
                    report.earlyKills++;
                    inspect(when + ", then the restarted backend (pid " + p.pid() + ") SIGKILLed during its start");
                    p = spawnBackend();
                }
                report.recovery(awaitListening(p, deadline));
            } else {
                report.recovery(startBackend());
            }
            report.iterations++;
            onIteration.run();
        }
        long deadline = deadline();
        worker.awaitAcks(worker.acks + 1, deadline); // it reconnected after the last restart
        worker.stop(deadline);
        backend.kill(); // what the clean close left must survive a crash too
        startBackend();
        verifyOnly("the clean close and one more backend SIGKILL after the last iteration");
    }

    // ---- permanent backend loss through ZooKeeper (issue 9, item 7) ----

    /** The frontend waits this long for a lost backend before it looks for a promoted mirror. */
    static final long CLUSTER_RECONNECT_TIMEOUT_MILLIS = 300;
    private DrillCluster cluster;
    private int nodes;

    /** A backend or mirror child with {@code --zk}: its id, PM file, port and process. */
    private record Node(String id, Path pm, int port, CliProcess proc) {
    }

    private Node spawnNode(String role, long deadline) {
        String id = "n" + nodes;
        Path file = nodes == 0 ? dir.resolve("backend.pm") : dir.resolve(id + ".pm");
        nodes++;
        int p = freePort();
        CliProcess proc = CliProcess.start(role + " " + id, List.of("drill-node", "--role", role, "--pm",
                file.toString(), "--port", Integer.toString(p), "--size", settings.pmSize(), "--credentials",
                credentials().toString(), "--zk", cluster.connectString(), "--cluster", DrillCluster.NAME,
                "--node-id", id, "--lease-ms", Integer.toString(settings.leaseMillis())), backendLog,
                transcript(id));
        children.add(proc);
        awaitListening(proc, deadline);
        return new Node(id, file, p, proc);
    }

    /**
     * Permanent backend loss: ZooKeeper in this JVM, backend and mirror as child processes with {@code --zk}, the
     * worker a frontend from {@code connectCluster}. Each iteration lets the worker acknowledge 1 to
     * {@code maxAcks} more transfers, SIGKILLs the backend (the worker keeps transferring, so the kill lands at a
     * random point of a commit) and deletes its PM file; the mirror's failover coordinator promotes it; the
     * worker must resume on it. Failover time is SIGKILL to the first acknowledgement read after the promotion was
     * seen (acknowledgements read before it were the old backend's, printed just before the kill), split at the
     * configuration's change (its znode's mtime, kept by
     * ZooKeeper in this JVM: detection + the promotion's compare-and-set) into reconfigured and resume. Then a fresh mirror joins the new backend and must become
     * IN_SYNC in the configuration; the worker stops cleanly, the drill waits until the new backend's shipper has
     * no lag, and a new worker connects (posting to the fresh mirror too) and its balances are verified.
     */
    private void backendLosses(Runnable onIteration) {
        nodeLosses(onIteration, this::loseBackend);
    }

    /** The backend and its SYNC mirror of a permanent-loss drill; a loss replaces one of them. */
    private static final class NodePair {
        Node primary;
        Node mirror;
    }

    /**
     * What one iteration of a permanent-loss drill kills: it SIGKILLs a node of {@code nodes} and deletes its image,
     * waits until the cluster and the worker went on without it, records the failover and leaves {@code nodes} with
     * the surviving backend; returns what happened (the next worker's reason).
     */
    @FunctionalInterface
    private interface NodeLoss {
        String lose(int iteration, NodePair nodes, Worker worker, long acksAtKill, long deadline);
    }

    /**
     * The loop {@link #backendLosses} and {@link #mirrorLosses} share: ZooKeeper in this JVM, backend and mirror as
     * child processes, the worker from {@code connectCluster}; each iteration lets the worker acknowledge 1 to
     * {@code maxAcks} transfers, applies {@code loss}, then a fresh mirror joins and must become IN_SYNC, the worker
     * stops cleanly, the drill waits until the backend's shipper has no lag and a new worker connects (posting to
     * the fresh mirror too) and its balances are verified.
     */
    private void nodeLosses(Runnable onIteration, NodeLoss loss) {
        cluster = DrillCluster.start(dir.resolve("zookeeper"), settings.leaseMillis());
        long deadline = deadline();
        NodePair nodes = new NodePair();
        nodes.primary = spawnNode("backend", deadline);
        backend = nodes.primary.proc();
        nodes.mirror = spawnNode("mirror", deadline);
        awaitInSync(nodes.mirror, deadline);
        Worker worker = new Worker(false, "the first start");
        worker.awaitStartup(deadline);
        for (int i = 1; i <= settings.iterations(); i++) {
            deadline = deadline();
            awaitSomeAcks(worker, deadline);
            String when = loss.lose(i, nodes, worker, worker.acks, deadline);
            nodes.mirror = spawnNode("mirror", deadline);
            awaitInSync(nodes.mirror, deadline);
            requireBackend(nodes.primary);
            worker = restartWorker(worker, when + " and a fresh mirror " + nodes.mirror.id(), deadline);
            report.iterations++;
            onIteration.run();
        }
        deadline = deadline();
        worker.stop(deadline);
        verifyOnly("the clean close after the last iteration");
    }

    /** {@link #backendLosses}' kill: the backend goes, the mirror is promoted and the worker resumes on it. */
    private String loseBackend(int i, NodePair nodes, Worker worker, long acksAtKill, long deadline) {
        Node primary = nodes.primary;
        long epoch = cluster.current().epoch();
        long killed = System.currentTimeMillis(); // wall clock: compared with ZooKeeper's mtime below
        primary.proc().kill();
        deleteImage(primary.pm());
        String when = String.format(Locale.ROOT, "iteration %d (backend %s pid %d SIGKILLed, PM file deleted)",
                i, primary.id(), primary.proc().pid());
        String promotedId = nodes.mirror.id();
        cluster.await(c -> c.epoch() > epoch && c.isBackend(promotedId), "mirror " + promotedId
                + " promoted above epoch " + epoch, deadline);
        // An ACK printed before the configuration changed was the old backend's (a SYNC commit needs both nodes,
        // and the mirror serves only once promoted): the worker may have printed several just before the kill.
        // The first commit on the promoted mirror is the first ACK printed after the change (each line carries
        // the time it left the pipe, however long it then waited in the queue).
        awaitAckAfter(worker, acksAtKill, cluster.configChangedMillis(), deadline);
        report.failover(killed, cluster.configChangedMillis(), worker.lastAckMillis);
        nodes.primary = nodes.mirror;
        backend = nodes.primary.proc();
        pm = nodes.primary.pm();
        inspect(when + ", on the promoted mirror's image");
        return when + ", promotion of " + promotedId;
    }

    /** Lets the worker acknowledge 1 to {@code maxAcks} more transfers. */
    private void awaitSomeAcks(Worker worker, long deadline) {
        worker.awaitAcks(worker.acks + 1 + random.nextInt(Math.max(1, settings.maxAcks())), deadline);
    }

    /**
     * Stops {@code worker} cleanly, waits until the backend's shipper has no lag and starts a new worker (which
     * posts to every mirror in the configuration now) whose balances are verified at start-up.
     */
    private Worker restartWorker(Worker worker, String why, long deadline) {
        worker.stop(deadline);
        cluster.awaitNoLag(cluster.current().backend(), deadline);
        Worker next = new Worker(false, why);
        next.awaitStartup(deadline);
        return next;
    }

    /** Reads the worker's output until an acknowledgement printed at or after {@code sinceMillis} (wall clock). */
    private static void awaitAckAfter(Worker worker, long acksBefore, long sinceMillis, long deadline) {
        worker.awaitAcks(Math.max(acksBefore, worker.acks) + 1, deadline);
        while (worker.lastAckMillis < sinceMillis) {
            worker.awaitAcks(worker.acks + 1, deadline);
        }
    }

    /** A failover nobody caused (a node's session expired: a pause longer than the lease) ends the drill. */
    private void requireBackend(Node expected) {
        io.asymnvm.cluster.ClusterConfig c = cluster.current();
        if (!c.isBackend(expected.id())) {
            throw new DrillFailure("the cluster failed over without a kill: backend " + expected.id()
                    + " was replaced (" + c + "); a node paused longer than its lease of " + settings.leaseMillis()
                    + " ms (machine overloaded? try a longer --lease-ms)" + expected.proc().logTail());
        }
    }

    /**
     * SYNC mirror loss: each iteration SIGKILLs the mirror and deletes its image while the worker commits; the
     * worker's commits wait until the backend drops the mirror from the configuration (its lease lapsed) and the
     * worker's frontend drops it too, then go on (the worker must acknowledge two more transfers); a fresh mirror
     * joins and must become IN_SYNC; the worker reconnects to include it and its balances are verified.
     */
    private void mirrorLosses(Runnable onIteration) {
        nodeLosses(onIteration, this::loseMirror);
    }

    /** {@link #mirrorLosses}' kill: the mirror goes, the backend drops it and the worker goes on. */
    private String loseMirror(int i, NodePair nodes, Worker worker, long acksAtKill, long deadline) {
        Node mirror = nodes.mirror;
        long killed = System.currentTimeMillis();
        mirror.proc().kill();
        deleteImage(mirror.pm());
        String lostId = mirror.id();
        String when = String.format(Locale.ROOT, "iteration %d (SYNC mirror %s pid %d SIGKILLed, PM file "
                + "deleted)", i, lostId, mirror.proc().pid());
        cluster.await(c -> c.mirror(lostId).isEmpty(), "mirror " + lostId + " dropped", deadline);
        // commits go on without it: the first ACK printed after the drop (earlier ones may predate the kill)
        awaitAckAfter(worker, acksAtKill, cluster.configChangedMillis(), deadline);
        report.failover(killed, cluster.configChangedMillis(), worker.lastAckMillis);
        requireBackend(nodes.primary);
        return when;
    }

    // ---- ZooKeeper loss (issue 9 item 7: --kill zookeeper) ----

    /**
     * How long ZooKeeper stays down, in leases: longer than a lease, so that every node's Curator gives its session
     * up (LOST) while nothing can be decided, and the backend's session is past its timeout when ZooKeeper returns.
     */
    static final double ZK_DOWN_LEASES = 1.5;
    /**
     * After ZooKeeper returns without a backend kill, the configuration must not change for this many leases: the
     * mirrors' reconnect grace ({@code FailoverCoordinator.RECONNECT_GRACE_LEASES} = 2) plus one lease.
     */
    static final int ZK_BACK_QUIET_LEASES = 3;
    private static final long ROLE_POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(50);
    /** [from, to) wall-clock millis during which ZooKeeper was down (to = Long.MAX_VALUE while it is). */
    private final List<long[]> zkDownWindows = new ArrayList<>();
    private CliProcess zookeeper;
    private int zookeeperPort;
    private List<Node> mirrorsOfLastBackend = List.of();

    private void startZooKeeper(long deadline) {
        zookeeper = CliProcess.start("zookeeper", List.of("drill-zookeeper", "--dir",
                dir.resolve("zookeeper").toString(), "--port", Integer.toString(zookeeperPort)), backendLog,
                transcript("zookeeper"));
        children.add(zookeeper);
        awaitListening(zookeeper, deadline);
    }

    /**
     * ZooKeeper loss: ZooKeeper runs in a child JVM on a fixed data directory and port, with a backend, {@code
     * mirrors} SYNC mirrors and the worker (a frontend from {@code connectCluster}). Each iteration lets the worker
     * acknowledge 1 to {@code maxAcks} transfers, then SIGKILLs ZooKeeper for {@value #ZK_DOWN_LEASES} leases. The
     * backend keeps serving its epoch, so the worker must acknowledge more transfers while ZooKeeper is down
     * ({@code commits_while_zk_down} counts every ACK read in such a window); then, in odd iterations, the backend
     * is SIGKILLed too (its image deleted) while ZooKeeper is still down.
     * During the outage every mirror is asked for its role over its own control port every
     * {@value #ROLE_POLL_NANOS} ns: one that reports itself backend is a promotion without a quorum (a violation,
     * counted in {@code promotions_without_quorum}). Then ZooKeeper restarts on the same directory and port. Without a
     * backend kill (even iterations) the configuration must keep its epoch and backend for {@value #ZK_BACK_QUIET_LEASES}
     * leases (the backend reclaims its lease; no mirror takes it) and the worker must go on; with one, exactly one
     * in-sync mirror must be promoted (epoch + 1, the configuration changed after ZooKeeper was back), the worker
     * resumes on it, the other mirrors must become IN_SYNC under the new backend, and fresh mirrors restore the count
     * (not after the last iteration: the final verify-only worker follows). {@code failover_ms} counts from the
     * backend's SIGKILL. Each iteration ends with the worker stopped cleanly, the backend's shippers
     * caught up, and a new worker (which posts to every mirror) whose balances are verified against the oracle.
     */
    private void zookeeperLosses(Runnable onIteration) {
        zookeeperPort = freePort();
        long deadline = deadline();
        startZooKeeper(deadline);
        cluster = DrillCluster.connect("127.0.0.1:" + zookeeperPort, settings.leaseMillis());
        Node primary = spawnNode("backend", deadline);
        backend = primary.proc();
        List<Node> mirrors = new ArrayList<>();
        while (mirrors.size() < settings.mirrors()) {
            Node m = spawnNode("mirror", deadline);
            awaitInSync(m, deadline);
            mirrors.add(m);
        }
        mirrorsOfLastBackend = mirrors;
        Worker worker = new Worker(false, "the first start");
        worker.awaitStartup(deadline);
        long downMillis = (long) (ZK_DOWN_LEASES * settings.leaseMillis());
        for (int i = 1; i <= settings.iterations(); i++) {
            deadline = deadline();
            boolean killBackend = i % 2 == 1;
            awaitSomeAcks(worker, deadline);
            long acksAtKill = worker.acks;
            io.asymnvm.cluster.ClusterConfig before = cluster.current();
            long versionBefore = cluster.version();
            long[] window = {System.currentTimeMillis(), Long.MAX_VALUE};
            zkDownWindows.add(window);
            zookeeper.kill();
            String when = String.format(Locale.ROOT, "iteration %d (ZooKeeper pid %d SIGKILLed%s)", i,
                    zookeeper.pid(), killBackend ? ", then backend " + primary.id() + " pid " + primary.proc().pid()
                            + " SIGKILLed and its PM file deleted" : "");
            // the backend keeps serving its epoch: commits go on without ZooKeeper
            awaitAckAfter(worker, acksAtKill, window[0], deadline);
            awaitSomeAcks(worker, deadline);
            long acksAtBackendKill = worker.acks;
            long backendKilledMillis = System.currentTimeMillis();
            if (killBackend) {
                primary.proc().kill();
                deleteImage(primary.pm());
            }
            long upAt = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(downMillis);
            do { // the mirrors must stay mirrors however long ZooKeeper is away
                for (Node m : mirrors) {
                    String role = DrillCluster.roleOf(new io.asymnvm.cluster.NodeEndpoint(m.id(), HOST, m.port()));
                    if (role != null && !role.startsWith("mirror ")) {
                        report.promotionsWithoutQuorum++;
                        report.violation("mirror " + m.id() + " reports '" + role + "' while ZooKeeper is down, in "
                                + when);
                    }
                }
                java.util.concurrent.locks.LockSupport.parkNanos(ROLE_POLL_NANOS); // an observation window
            } while (System.nanoTime() - upAt < 0);
            startZooKeeper(deadline);
            window[1] = System.currentTimeMillis();
            cluster.awaitReachable(deadline);
            if (killBackend) {
                List<String> ids = mirrors.stream().map(Node::id).toList();
                io.asymnvm.cluster.ClusterConfig after = cluster.await(c -> c.epoch() > before.epoch(),
                        "a mirror promoted above epoch " + before.epoch(), deadline);
                long changed = cluster.configChangedMillis();
                if (changed < window[1]) {
                    report.promotionsWithoutQuorum++;
                    report.violation("the configuration changed at " + changed + " ms, before ZooKeeper was back at "
                            + window[1] + " ms, in " + when);
                }
                if (after.epoch() != before.epoch() + 1 || !ids.contains(after.backend().id())) {
                    report.violation("expected exactly one promotion of one of " + ids + " to epoch "
                            + (before.epoch() + 1) + " after " + when + "; the configuration is " + after);
                    throw new DrillFailure("promotion after " + when + " went wrong: " + after);
                }
                report.promotions++;
                awaitAckAfter(worker, acksAtBackendKill, changed, deadline);
                report.failover(backendKilledMillis, changed, worker.lastAckMillis);
                String promotedId = after.backend().id();
                Node promoted = mirrors.stream().filter(m -> m.id().equals(promotedId)).findFirst().orElseThrow();
                mirrors.remove(promoted);
                primary = promoted;
                backend = primary.proc();
                pm = primary.pm();
                inspect(when + ", on the promoted mirror's image");
                awaitMirrorsOf(primary, mirrors, deadline);
                while (i < settings.iterations() && mirrors.size() < settings.mirrors()) { // the last: verified below
                    Node m = spawnNode("mirror", deadline);
                    awaitInSync(m, deadline);
                    mirrors.add(m);
                }
            } else {
                long quietUntil = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ZK_BACK_QUIET_LEASES
                        * (long) settings.leaseMillis());
                worker.awaitAcks(worker.acks + 1, deadline); // commits go on after ZooKeeper is back too
                while (System.nanoTime() - quietUntil < 0) { // an observation window: nothing may happen
                    requireEpoch(primary, before.epoch(), when);
                    java.util.concurrent.locks.LockSupport.parkNanos(ROLE_POLL_NANOS);
                }
                requireEpoch(primary, before.epoch(), when);
                for (Node m : mirrors) { // a mirror whose session expired meanwhile rejoined: in sync again
                    awaitInSync(m, deadline);
                }
            }
            requireBackend(primary);
            // A worker posts only to the mirrors it connected with: after a promotion, or when a mirror was dropped
            // and rejoined (its session expired during the outage), it reconnects to include them; its balances are
            // verified then. After the last iteration the verify-only worker below does that.
            if (i < settings.iterations() && (killBackend || cluster.version() != versionBefore)) {
                worker = restartWorker(worker, when, deadline);
            }
            report.iterations++;
            onIteration.run();
        }
        deadline = deadline();
        worker.stop(deadline);
        if (!mirrorsOfLastBackend.isEmpty()) {
            cluster.awaitNoLag(cluster.current().backend(), deadline);
        }
        verifyOnly("the clean close after the last iteration");
    }

    private void requireEpoch(Node expected, long epoch, String when) {
        io.asymnvm.cluster.ClusterConfig c = cluster.awaitReachable(deadline());
        if (c.epoch() != epoch || !c.isBackend(expected.id())) {
            report.violation("after " + when + " without a backend kill, the configuration moved from epoch " + epoch
                    + " with backend " + expected.id() + " to " + c);
            throw new DrillFailure("failover without a backend failure after " + when);
        }
    }

    /**
     * After a promotion, the other mirrors of the old backend must serve the new one: each must be listed IN_SYNC
     * in the new configuration (re-attached, or re-added and re-copied).
     */
    private void awaitMirrorsOf(Node promoted, List<Node> others, long deadline) {
        for (Node m : others) {
            awaitInSync(m, deadline);
        }
    }

    private void awaitInSync(Node mirror, long deadline) {
        try {
            cluster.await(c -> c.mirror(mirror.id()).map(m -> m.inSync()).orElse(false), "mirror " + mirror.id()
                    + " IN_SYNC", deadline);
        } catch (DrillFailure f) {
            // why it stays catching up is in the mirror's log (its gate names the frontend it waits for)
            throw new DrillFailure(f.getMessage() + "; mirror " + mirror.id() + ":" + mirror.proc().logTail()
                    + (backend != null ? "; backend:" + backend.logTail() : ""));
        }
    }

    private static void deleteImage(Path file) {
        try {
            java.nio.file.Files.deleteIfExists(file);
            java.nio.file.Files.deleteIfExists(file.resolveSibling(file.getFileName() + ".catalog"));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot delete the lost backend's image " + file, e);
        }
    }

    /**
     * Runs {@link InspectTool} over the PM file after a kill: every CRC before the durable watermarks must hold
     * and the slab table must be sane. Read-only, so it is safe beside the running backend of a frontend drill.
     */
    private void inspect(String when) {
        report.inspections++;
        try {
            InspectReport r = InspectTool.inspect(pm);
            for (String p : r.problems()) {
                report.violation("inspect after " + when + ": " + p);
            }
        } catch (RuntimeException e) {
            report.violation("inspect after " + when + " failed: " + e.getMessage());
        }
    }

    /**
     * Runs {@code inspect --deep} over the PM file of a killed backend: the block allocator of every slab and every
     * named structure, on the heap as the restart's replay will leave it. Only while no backend serves the file.
     */
    private void deepInspect(String when) {
        report.deepInspections++;
        try {
            for (String p : InspectTool.deepInspect(pm).problems()) {
                report.violation("inspect --deep after " + when + ": " + p);
            }
        } catch (RuntimeException e) {
            report.violation("inspect --deep after " + when + " failed: " + e.getMessage());
        }
    }

    /** A verify-only worker: recovers (there should be nothing left to do), reports balances, closes. */
    private void verifyOnly(String when) {
        long deadline = deadline();
        Worker check = new Worker(true, when);
        check.awaitStartup(deadline);
        check.awaitClosed(deadline);
    }

    private Path transcript(String child) {
        return settings.keep() ? dir.resolve(child + ".out") : null;
    }

    private long deadline() {
        return System.nanoTime() + iterationNanos;
    }

    /**
     * Compares the balances a recovered worker printed with the oracle (see {@link DrillReport}); the transfer in
     * doubt is resolved by it.
     */
    private void verify(long[] observed, String when) {
        report.verifications++;
        BankOracle.Verdict v = oracle.check(observed, inDoubt);
        switch (v.outcome()) {
            case MATCH -> {
                if (inDoubt != null) {
                    report.inDoubtNotCommitted++;
                }
            }
            case IN_DOUBT_COMMITTED -> report.inDoubtCommitted++;
            case LOST -> {
                report.lost++;
                report.violation("lost: after " + when + " " + v.detail());
            }
            case PARTIAL -> {
                report.partial++;
                report.violation("partial: after " + when + " " + v.detail());
            }
            case WRONG_SIZE -> report.violation("after " + when + " " + v.detail());
        }
        inDoubt = null;
    }

    /** The credentials file the drill's backend creates beside its PM file (BackendConfiguration's default). */
    private Path credentials() {
        return dir.resolve("backend.pm").toAbsolutePath().resolveSibling("backend.pm.credentials");
    }

    /** Starts (or restarts) the backend on the drill's file and port; returns spawn-to-LISTENING millis. */
    private double startBackend() {
        return awaitListening(spawnBackend(), deadline());
    }

    private CliProcess spawnBackend() {
        CliProcess p = CliProcess.start("backend", List.of("drill-backend", "--pm", pm.toString(), "--port",
                Integer.toString(port), "--size", settings.pmSize(), "--credentials", credentials().toString()), backendLog, transcript("backend"));
        children.add(p);
        backend = p;
        return p;
    }

    private double awaitListening(CliProcess p, long deadline) {
        while (true) {
            Line l = p.nextLine(deadline);
            if (l.eof()) {
                throw new DrillFailure("backend (pid " + p.pid() + ") exited before serving" + p.logTail());
            }
            if (l.text().startsWith("LISTENING ")) {
                double millis = p.nanosSinceStart() / 1e6;
                typicalBackendStartMillis = millis;
                return millis;
            }
        }
    }

    /**
     * One time in {@value #EARLY_KILL_ONE_IN}: whether to SIGKILL a restarted process before it reports ready, and
     * after how long (uniform up to twice its last start time), so kills also land in JVM start, attach and
     * recovery itself (recovery must be idempotent). Returns 0 for no early kill.
     */
    private long earlyKillNanos(double typicalStartMillis) {
        if (random.nextInt(EARLY_KILL_ONE_IN) != 0) {
            return 0;
        }
        return 1 + (long) (random.nextDouble() * 2 * typicalStartMillis * 1e6);
    }

    private static int freePort() {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException("no free port on loopback", e);
        }
    }

    /** Stops the backend cleanly if it runs, kills anything else still alive, removes the scratch directory. */
    private void finish() {
        try {
            if (backend != null && backend.alive()) {
                try {
                    int code = backend.stop(STOP_SECONDS);
                    if (code != 0 && code != 128 + 15) {
                        report.violation("backend (pid " + backend.pid() + ") exited with code " + code
                                + " after SIGTERM" + backend.logTail());
                    } else if (report.iterations > 0) {
                        deepInspect("the clean stop at the end of the drill"); // nothing serves the image now
                    }
                } catch (DrillFailure e) {
                    report.violation(e.getMessage());
                }
            }
        } finally {
            killChildren();
            if (cluster != null) {
                cluster.close();
            }
            if (!settings.keep()) {
                ScratchDirectory.delete(dir);
            }
        }
    }

    private void killChildren() {
        for (CliProcess c : children) {
            try {
                c.close();
            } catch (RuntimeException e) {
                // best effort: keep killing the others
            }
        }
    }

    /** One worker incarnation: its process and what its lines said so far. */
    private final class Worker {
        final CliProcess proc;
        /** What happened before this incarnation, for the verification of its balances. */
        final String after;
        /** The transfer announced by BEGIN and not yet answered by ACK or ABORT. */
        Transfer begun;
        long acks;
        double recoveredMillis = -1;
        long recoveredTransactions;
        long[] balances;
        boolean closed;
        /** When the drill read the latest ACK (wall clock). */
        long lastAckMillis;

        Worker(boolean verifyOnly, String after) {
            this.after = after;
            int n = ++incarnations;
            List<String> args = new ArrayList<>(List.of("drill-worker", "--host", HOST, "--port",
                    Integer.toString(port), "--frontend-id", Integer.toString(FRONTEND_ID), "--accounts",
                    Integer.toString(settings.accounts()), "--initial-balance",
                    Long.toString(settings.initialBalance()), "--seed", Long.toString(random.nextLong()),
                    "--reconnect-timeout-ms", Long.toString(cluster != null ? CLUSTER_RECONNECT_TIMEOUT_MILLIS
                            : RECONNECT_TIMEOUT_MILLIS), "--redo-batch",
                    Integer.toString(REDO_BATCH_TRANSACTIONS), "--redo-delay-us",
                    Long.toString(REDO_MAX_DELAY_MICROS), "--credentials", credentials().toString()));
            if (cluster != null) {
                args.addAll(List.of("--zk", cluster.connectString()));
            }
            if (verifyOnly) {
                args.add("--verify-only");
            }
            proc = CliProcess.start("worker " + n, args, workerLog, transcript("worker-" + n));
            children.add(proc);
        }

        private Line next(long deadline) {
            Line l = proc.nextLine(deadline);
            if (l.eof()) {
                throw new DrillFailure(proc.name() + " (pid " + proc.pid() + ") exited unexpectedly"
                        + proc.logTail());
            }
            return l;
        }

        /** Reads RECOVERED and BALANCES (the balances are verified as they arrive). */
        void awaitStartup(long deadline) {
            while (balances == null) {
                handle(next(deadline));
            }
        }

        /** Handles lines until the worker has acknowledged {@code target} transfers. */
        void awaitAcks(long target, long deadline) {
            while (acks < target) {
                handle(next(deadline));
            }
        }

        /** After a SIGKILL: handles every complete line the worker printed before it died. */
        void drain(long deadline) {
            for (Line l = proc.nextLine(deadline); !l.eof(); l = proc.nextLine(deadline)) {
                if (!l.partial()) {
                    handle(l);
                }
            }
        }

        /** STOP, then the rest of its lines up to CLOSED, then exit code 0. */
        void stop(long deadline) {
            proc.send(WorkerProtocol.STOP);
            awaitClosed(deadline);
        }

        void awaitClosed(long deadline) {
            while (!closed) {
                handle(next(deadline));
            }
            int code = proc.awaitExit(deadline);
            if (code != 0) {
                throw new DrillFailure(proc.name() + " exited with code " + code + " after closing" + proc.logTail());
            }
        }

        private void handle(Line l) {
            String[] f = l.text().strip().split(" ");
            boolean started = balances != null;
            switch (f[0]) {
                case WorkerProtocol.RECOVERED -> {
                    expect(recoveredMillis < 0 && f.length == 3, l);
                    recoveredMillis = Double.parseDouble(f[1]);
                    recoveredTransactions = Long.parseLong(f[2]);
                    typicalWorkerStartMillis = proc.nanosSinceStart() / 1e6;
                }
                case WorkerProtocol.BALANCES -> {
                    expect(recoveredMillis >= 0 && !started, l);
                    balances = Arrays.stream(f, 1, f.length).mapToLong(Long::parseLong).toArray();
                    verify(balances, after);
                }
                case WorkerProtocol.BEGIN -> {
                    expect(started && begun == null && f.length == 5, l);
                    begun = new Transfer(Long.parseLong(f[1]), Integer.parseInt(f[2]), Integer.parseInt(f[3]),
                            Long.parseLong(f[4]));
                }
                case WorkerProtocol.ACK -> {
                    Transfer t = answered(f, l);
                    if (!oracle.commits(t)) {
                        report.violation(proc.name() + ": " + t + " was acknowledged, but the oracle balance of "
                                + "account " + t.from() + " is " + oracle.balances()[t.from()]);
                    }
                    oracle.apply(t);
                    report.acknowledged++;
                    acks++;
                    lastAckMillis = l.readMillis();
                    if (zkDownWindows.stream().anyMatch(w -> w[0] <= l.readMillis() && l.readMillis() < w[1])) {
                        report.commitsWhileZkDown++;
                    }
                }
                case WorkerProtocol.ABORT -> {
                    Transfer t = answered(f, l);
                    if (oracle.commits(t)) {
                        report.violation(proc.name() + ": " + t + " aborted for insufficient funds, but the oracle "
                                + "balance of account " + t.from() + " is " + oracle.balances()[t.from()]);
                    }
                    report.aborted++;
                }
                case WorkerProtocol.CLOSED -> {
                    expect(started, l);
                    closed = true;
                }
                case WorkerProtocol.ERROR -> throw new DrillFailure(proc.name() + " failed: " + l.text()
                        + proc.logTail());
                default -> expect(false, l);
            }
        }

        private void expect(boolean ok, Line l) {
            if (!ok) {
                throw new DrillFailure(proc.name() + " printed '" + l.text() + "' out of order (open transfer: "
                        + begun + ")");
            }
        }

        private Transfer answered(String[] f, Line l) {
            Transfer t = begun;
            expect(t != null && f.length == 2 && Long.parseLong(f[1]) == t.seq(), l);
            begun = null;
            return t;
        }
    }
}
