package io.asymnvm.examples.cli;

import io.asymnvm.backend.BackendConfiguration;
import io.asymnvm.core.Sizes;
import io.asymnvm.core.fabric.tcp.TcpFabric;
import io.asymnvm.mirror.MirrorNode;
import io.asymnvm.mirror.ReplicationClient;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;

/**
 * {@code asymnvm mirror --pm FILE --port P --backend H:P [--credentials F] [--size S] [--mode sync|async]}: runs a mirror of the backend
 * at H:P until SIGTERM or SIGINT (README "Mirrors"). A new PM file gets the backend's geometry and identity; the
 * credentials file must be the backend's (it holds the replication secret). Prints {@code LISTENING host:port}
 * once it serves, like {@code backend}; the backend then copies its image and streams redo to it.
 */
@Command(name = "mirror", mixinStandardHelpOptions = true,
        description = "Run a mirror of a backend: same image, replayed from the redo the backend ships.")
public final class MirrorCommand implements Callable<Integer> {
    @Option(names = "--pm", required = true, description = "PM image file (formatted as the backend's if absent).")
    Path pm;

    @Option(names = "--port", defaultValue = "7100", description = "TCP port; 0 picks a free one. Default: ${DEFAULT-VALUE}.")
    int port;

    @Option(names = "--host", defaultValue = "127.0.0.1", description = "Address to bind, and the one the backend ships to. Default: ${DEFAULT-VALUE}.")
    String host;

    @Option(names = "--backend", paramLabel = "HOST:PORT", description = "The backend to replicate (without --zk).")
    String backend;

    // ---- cluster on ZooKeeper (issue 9): the backend comes from the configuration; promoted automatically ----

    @picocli.CommandLine.Mixin
    io.asymnvm.backend.cluster.ClusterNodeOptions cluster = new io.asymnvm.backend.cluster.ClusterNodeOptions();

    @Option(names = "--credentials", paramLabel = "FILE", description = "The backend's credentials file (frontend secrets and the replication secret). Default: the PM file's path + .credentials.")
    Path credentials;

    @Option(names = "--insecure", description = "Authentication off (the backend must run --insecure too).")
    boolean insecure;

    @Option(names = "--size", description = "Size of the image; must equal the backend's (default: the backend's).")
    String size;

    // ---- replication mode (issue 9): SYNC (frontends post to it) or ASYNC (the backend ships, bounded lag) ----

    @Option(names = "--mode", defaultValue = "sync", paramLabel = "sync|async", converter = ModeConverter.class,
            description = "sync: frontends post every commit to this mirror too; async: the backend ships to it "
                    + "periodically within its --async-max-lag-ms/--async-max-lag-tx. Default: ${DEFAULT-VALUE}.")
    io.asymnvm.cluster.ReplicationMode mode;

    /** {@code sync|async}, any case; anything else is refused naming the value and the choices. */
    static final class ModeConverter implements picocli.CommandLine.ITypeConverter<io.asymnvm.cluster.ReplicationMode> {
        @Override
        public io.asymnvm.cluster.ReplicationMode convert(String value) {
            for (io.asymnvm.cluster.ReplicationMode m : io.asymnvm.cluster.ReplicationMode.values()) {
                if (m.name().equalsIgnoreCase(value)) {
                    return m;
                }
            }
            throw new picocli.CommandLine.TypeConversionException("--mode " + value + " is not a replication mode: "
                    + "sync or async");
        }
    }

    @Override
    public Integer call() throws Exception {
        if (cluster.enabled()) {
            return ClusterNodeCommands.mirror(config(), host, cluster, mode);
        }
        if (backend == null) {
            throw new IllegalArgumentException("--backend HOST:PORT is required without --zk");
        }
        int colon = backend.lastIndexOf(':');
        if (colon < 1) {
            throw new IllegalArgumentException("--backend " + backend + " is not HOST:PORT");
        }
        String backendHost = backend.substring(0, colon);
        int backendPort = Integer.parseInt(backend.substring(colon + 1));
        MirrorNode mirror = MirrorNode.start(config(), backendHost, backendPort,
                mode == io.asymnvm.cluster.ReplicationMode.ASYNC);
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            mirror.close();
            stopped.countDown();
        }, "asymnvm-mirror-shutdown"));
        System.out.println("LISTENING " + host + ":" + mirror.port());
        System.out.flush();
        stopped.await();
        return 0;
    }

    private BackendConfiguration config() {
        BackendConfiguration.Builder b = BackendConfiguration.builder(pm).port(port).bindHost(host).insecure(insecure);
        if (size != null) {
            b.size(Sizes.parse(size));
        }
        if (credentials != null) {
            b.credentials(credentials);
        }
        return b.conclude();
    }

    /** {@code asymnvm promote --host H --port P --credentials F}: makes the mirror at H:P the backend. */
    @Command(name = "promote", mixinStandardHelpOptions = true,
            description = "Promote a mirror to backend under epoch + 1 (refused while it catches up).")
    public static final class Promote implements Callable<Integer> {
        @Option(names = "--host", defaultValue = "127.0.0.1", description = "mirror host (default ${DEFAULT-VALUE})")
        String host;

        @Option(names = "--port", required = true, description = "mirror port")
        int port;

        @Option(names = "--credentials", paramLabel = "FILE", description = "The cluster's credentials file (replication secret); omit only with authentication off.")
        Path credentials;

        @Override
        public Integer call() {
            if (port < 1 || port > 65535) {
                throw new IllegalArgumentException("port " + port + " outside [1, 65535]");
            }
            try (TcpFabric f = new TcpFabric(host, port)) {
                long epoch = ReplicationClient.promote(f, ReplicationClient.secretOf(credentials));
                System.out.println("PROMOTED " + host + ":" + port + " epoch " + epoch);
            }
            return 0;
        }
    }
}
