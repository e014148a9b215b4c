package io.asymnvm.examples.cli;

import io.asymnvm.backend.BackendConfiguration;
import io.asymnvm.backend.cluster.ClusterBackend;
import io.asymnvm.cluster.BackendGuard;
import io.asymnvm.cluster.ClusterOptions;
import io.asymnvm.cluster.ClusterSession;
import io.asymnvm.cluster.EmbeddedZooKeeper;
import io.asymnvm.core.Sizes;
import io.asymnvm.mirror.ClusterMirror;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;

/**
 * {@code asymnvm cluster --dir D [--mirrors N] [--base-port P]}: the embedded default of issue 9 on one machine. One
 * JVM runs an in-process ZooKeeper ({@link EmbeddedZooKeeper}), a backend ({@code b0}) and N SYNC mirrors
 * ({@code m1..mN}), each node with its own ZooKeeper session (its own lease), exactly as the separate
 * {@code backend --zk} and {@code mirror --zk} processes do. It prints each endpoint, the connect string, and
 * {@code LISTENING} once every mirror is in sync, then runs until standard input closes or SIGTERM/SIGINT, and
 * stops cleanly (mirrors first, then the backend, then ZooKeeper).
 *
 * <p>Ports: with {@code --base-port P}, ZooKeeper listens on P, the backend on P+1 and mirror i on P+1+i; with 0
 * (the default) each picks a free port (a restart on the same directory then needs {@code --base-port}, since the
 * configuration records the backend's port).
 */
@Command(name = "cluster", mixinStandardHelpOptions = true,
        description = "Run an embedded ZooKeeper, a backend and its mirrors in this JVM (issue 9's embedded default).")
public final class ClusterCommand implements Callable<Integer> {
    static final int MAX_MIRRORS = 8;

    @Option(names = "--dir", required = true, description = "Directory of the PM files, credentials and ZooKeeper data.")
    Path dir;

    @Option(names = "--mirrors", defaultValue = "1", description = "SYNC mirrors (0.." + MAX_MIRRORS + "). Default: ${DEFAULT-VALUE}.")
    int mirrors;

    @Option(names = "--base-port", defaultValue = "0", description = "ZooKeeper's port; the backend and mirrors take the next ones. 0: free ports. Default: ${DEFAULT-VALUE}.")
    int basePort;

    @Option(names = "--host", defaultValue = "127.0.0.1", description = "Address every node binds and advertises. Default: ${DEFAULT-VALUE}.")
    String host;

    @Option(names = "--size", defaultValue = "256m", description = "Size of the backend's PM image. Default: ${DEFAULT-VALUE}.")
    String size;

    @Option(names = "--cluster", defaultValue = ClusterOptions.DEFAULT_CLUSTER_NAME, description = "Cluster name. Default: ${DEFAULT-VALUE}.")
    String clusterName;

    @Option(names = "--lease-ms", defaultValue = "1000", description = "Lease of every node in ms. Default: ${DEFAULT-VALUE}.")
    int leaseMillis;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        if (mirrors < 0 || mirrors > MAX_MIRRORS) {
            throw new IllegalArgumentException("--mirrors out of range [0, " + MAX_MIRRORS + "]: " + mirrors);
        }
        if (basePort < 0 || basePort > 65535 - 1 - mirrors) {
            throw new IllegalArgumentException("--base-port out of range [0, " + (65535 - 1 - mirrors) + "]: "
                    + basePort);
        }
        long bytes = Sizes.parse(size);
        ClusterOptions.of(host + ":1").withClusterName(clusterName).withLeaseMillis(leaseMillis); // validates
        Files.createDirectories(dir);
        Path credentials = dir.resolve("cluster.credentials");
        BackendConfiguration backendConfig = BackendConfiguration.builder(dir.resolve("b0.pm")).size(bytes)
                .port(port(1)).bindHost(host).credentials(credentials).conclude();
        List<BackendConfiguration> mirrorConfigs = new ArrayList<>();
        for (int i = 1; i <= mirrors; i++) {
            mirrorConfigs.add(BackendConfiguration.builder(dir.resolve("m" + i + ".pm")).port(port(1 + i))
                    .bindHost(host).credentials(credentials).conclude());
        }
        PrintWriter out = spec.commandLine().getOut();
        CountDownLatch stop = new CountDownLatch(1);
        CountDownLatch stopped = new CountDownLatch(1);
        BackendGuard.Fence fence = (config, reason) -> {
            out.println("FENCED " + reason);
            out.flush();
        };
        List<AutoCloseable> open = new ArrayList<>(); // closed in reverse order
        try {
            EmbeddedZooKeeper zk = EmbeddedZooKeeper.start(dir.resolve("zookeeper"), host, basePort,
                    EmbeddedZooKeeper.DEFAULT_TICK_MILLIS);
            open.add(zk);
            ClusterOptions options = ClusterOptions.of(zk.connectString()).withClusterName(clusterName)
                    .withLeaseMillis(leaseMillis);
            out.println("ZOOKEEPER " + zk.connectString());
            ClusterSession backendSession = ClusterSession.connect(options);
            open.add(backendSession);
            ClusterBackend backend = ClusterBackend.start(backendSession, "b0", backendConfig, host, fence);
            open.add(backend.node());
            open.add(backend);
            out.println("BACKEND b0 " + host + ":" + backend.node().port() + " epoch " + backend.guard().epoch());
            out.flush();
            List<ClusterMirror> started = new ArrayList<>();
            for (int i = 1; i <= mirrors; i++) {
                ClusterSession s = ClusterSession.connect(options);
                open.add(s);
                ClusterMirror m = ClusterMirror.start(s, "m" + i, mirrorConfigs.get(i - 1), host, fence);
                open.add(m);
                started.add(m);
                out.println("MIRROR m" + i + " " + host + ":" + m.port());
                out.flush();
            }
            awaitInSync(backendSession, mirrors);
            out.println("CONNECT --zk " + zk.connectString() + " --cluster " + clusterName);
            out.println("LISTENING " + host + ":" + backend.node().port());
            out.flush();
            Thread hook = new Thread(() -> {
                stop.countDown();
                try {
                    stopped.await(30, java.util.concurrent.TimeUnit.SECONDS); // let the nodes close cleanly
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }, "asymnvm-cluster-stop");
            Runtime.getRuntime().addShutdownHook(hook);
            Thread stdin = new Thread(() -> drain(System.in, stop), "asymnvm-cluster-stdin");
            stdin.setDaemon(true);
            stdin.start();
            stop.await();
        } finally {
            for (int i = open.size() - 1; i >= 0; i--) {
                try {
                    open.get(i).close();
                } catch (Exception e) {
                    spec.commandLine().getErr().println("asymnvm cluster: closing " + open.get(i) + ": " + e);
                }
            }
        }
        out.println("STOPPED");
        out.flush();
        stopped.countDown();
        return 0;
    }

    private int port(int offset) {
        return basePort == 0 ? 0 : basePort + offset;
    }

    /** Waits until the configuration lists {@code n} in-sync mirrors (bounded: one minute). */
    private static void awaitInSync(ClusterSession session, int n) throws InterruptedException {
        CountDownLatch ready = new CountDownLatch(1);
        try (var w = session.store().watch(c -> {
            if (c.mirrors().stream().filter(m -> m.inSync()).count() >= n) {
                ready.countDown();
            }
        })) {
            if (!ready.await(60, java.util.concurrent.TimeUnit.SECONDS)) {
                throw new IllegalStateException("the mirrors did not reach IN_SYNC within 60 s: "
                        + session.store().read().value());
            }
        }
    }

    private static void drain(InputStream in, CountDownLatch stop) {
        byte[] buf = new byte[256];
        try {
            while (in.read(buf) >= 0) {
                // input is ignored; its end stops the cluster
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } finally {
            stop.countDown();
        }
    }
}
