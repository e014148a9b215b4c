package io.asymnvm.backend;

import io.asymnvm.core.Sizes;
import io.asymnvm.core.fabric.FabricProvider;
import io.asymnvm.core.fabric.FabricProviders;
import io.asymnvm.core.fabric.PersistenceDomain;
import io.asymnvm.core.fabric.tcp.TcpServerLimits;
import io.asymnvm.core.region.MappedRegion;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;

/**
 * {@code asymnvm backend}: runs a memory node until SIGTERM or SIGINT, then shuts down cleanly. Prints one
 * line {@code LISTENING host:port} on standard output once it serves (scripts and tests wait for it).
 */
@Command(name = "backend", mixinStandardHelpOptions = true,
        description = "Run a backend (memory node) serving a PM file over the TCP fabric.")
public final class BackendMain implements Callable<Integer> {

    @Option(names = "--pm", required = true, description = "PM image file (created and formatted if absent).")
    Path pm;

    @Option(names = "--size", defaultValue = "256m", description = "Size of a new image (e.g. 256m, 1g). Default: ${DEFAULT-VALUE}.")
    String size;

    @Option(names = "--port", defaultValue = "7000", description = "TCP port; 0 picks a free one. Default: ${DEFAULT-VALUE}.")
    int port;

    @Option(names = "--host", defaultValue = "127.0.0.1", description = "Address to bind. Default: ${DEFAULT-VALUE}.")
    String host;

    @Option(names = "--max-frontends", defaultValue = "8", description = "Frontend log areas in a new image. Default: ${DEFAULT-VALUE}.")
    int maxFrontends;

    @Option(names = "--map-mode", defaultValue = "FILE", description = "FILE (msync) or DAX (MAP_SYNC). Default: ${DEFAULT-VALUE}.")
    MappedRegion.MapMode mapMode;

    @Option(names = "--persistence", defaultValue = "ADR", description = "Persistence domain: ADR, EADR, WHOLE_SYSTEM. Default: ${DEFAULT-VALUE}.")
    PersistenceDomain domain;

    @Option(names = "--ddio", defaultValue = "true", negatable = true, description = "Whether DDIO is on. Default: ${DEFAULT-VALUE}.")
    boolean ddio;

    // ---- TCP server limits (TcpServerLimits; README "Limits") ----

    @Option(names = "--event-loop-threads", description = "I/O threads of the TCP server. Default: min(4, cores).")
    Integer eventLoopThreads;

    @Option(names = "--worker-threads", defaultValue = "16", description = "Threads running FLUSH and control calls. Default: ${DEFAULT-VALUE}.")
    int workerThreads;

    @Option(names = "--max-frame-length", defaultValue = "auto", description = "Largest request frame (e.g. 16m); auto = the largest legal request (a ring's capacity + header). Default: ${DEFAULT-VALUE}.")
    String maxFrameLength;

    @Option(names = "--max-connections", defaultValue = "0", description = "Open connections in total; 0 = frontends x per-frontend cap + 32. Default: ${DEFAULT-VALUE}.")
    int maxConnections;

    @Option(names = "--max-connections-per-frontend", defaultValue = "4", description = "Open connections attached to one frontend id. Default: ${DEFAULT-VALUE}.")
    int maxConnectionsPerFrontend;

    @Option(names = "--idle-timeout-ms", defaultValue = "300000", description = "Close a connection idle this long; 0 = never. Default: ${DEFAULT-VALUE}.")
    long idleTimeoutMillis;

    @Option(names = "--write-buffer-low", defaultValue = "256k", description = "Read a paused peer again below this many pending reply bytes. Default: ${DEFAULT-VALUE}.")
    String writeBufferLow;

    @Option(names = "--write-buffer-high", defaultValue = "1m", description = "Stop reading a peer with this many reply bytes pending. Default: ${DEFAULT-VALUE}.")
    String writeBufferHigh;

    TcpServerLimits serverLimits() {
        TcpServerLimits.Builder b = TcpServerLimits.builder().workerThreads(workerThreads)
                .maxFrameLength("auto".equalsIgnoreCase(maxFrameLength.trim()) ? 0
                        : sizeOption("--max-frame-length", maxFrameLength))
                .maxConnections(maxConnections).maxConnectionsPerFrontend(maxConnectionsPerFrontend)
                .idleTimeoutMillis(idleTimeoutMillis)
                .writeBufferWaterMarks(sizeOption("--write-buffer-low", writeBufferLow),
                        sizeOption("--write-buffer-high", writeBufferHigh));
        if (eventLoopThreads != null) {
            b.eventLoopThreads(eventLoopThreads);
        }
        return b.build();
    }

    private static int sizeOption(String name, String value) {
        long v = Sizes.parse(value);
        if (v < 0 || v > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(name + " out of range [0, " + Integer.MAX_VALUE + "]: " + value);
        }
        return (int) v;
    }

    @Option(names = "--credentials", paramLabel = "FILE", description = "Secrets of the frontends (mode 0600), "
            + "created at first start. Default: the PM file's path + .credentials.")
    Path credentials;

    @Option(names = "--insecure", description = "Authentication off: any peer that reaches the port may attach as "
            + "any frontend (logged at WARN).")
    boolean insecure;

    @Option(names = "--tls-cert", paramLabel = "PEM", description = "TLS: this backend's certificate chain (PEM).")
    Path tlsCert;

    @Option(names = "--tls-key", paramLabel = "PEM", description = "TLS: the certificate's private key (PEM, PKCS#8).")
    Path tlsKey;

    @Option(names = "--tls-client-ca", paramLabel = "PEM",
            description = "Mutual TLS: clients must present a certificate signed by these CAs (PEM).")
    Path tlsClientCa;

    @Option(names = "--slab-quota", defaultValue = "0", description = "Most slabs one frontend may hold; 0 = no limit. Default: ${DEFAULT-VALUE}.")
    int slabQuota;

    @Option(names = "--catalog-quota", defaultValue = "256", description = "Most catalog names (named structures) one frontend may hold, 1.." + io.asymnvm.backend.catalog.CatalogIndex.CAPACITY + " (the catalog holds " + io.asymnvm.backend.catalog.CatalogIndex.CAPACITY + " in all). Default: ${DEFAULT-VALUE}.")
    int catalogQuota;
    // ---- a second responder through the fabric SPI (rdma: the asymnvm-rdma module on the class path) ----

    @Option(names = "--fabric", defaultValue = "tcp", description = "Also serve this fabric: tcp (only the TCP port) or rdma (on --rdma-port; falls back to a TCP responder there, with a warning, where rdma cannot run). Default: ${DEFAULT-VALUE}.")
    String fabric;

    @Option(names = "--rdma-port", defaultValue = "7001", description = "Port of the rdma responder (--fabric rdma). Default: ${DEFAULT-VALUE}.")
    int rdmaPort;

    @Option(names = "--strict-fabric", description = "Refuse to start when the --fabric cannot run here instead of falling back to tcp.")
    boolean strictFabric;

    // ---- cluster on ZooKeeper (issue 9; io.asymnvm.backend.cluster) ----

    @CommandLine.Mixin
    io.asymnvm.backend.cluster.ClusterNodeOptions cluster = new io.asymnvm.backend.cluster.ClusterNodeOptions();

    // ---- ASYNC mirrors (issue 9; io.asymnvm.backend.mirror.AsyncLagBounds) ----

    @Option(names = "--async-max-lag-ms", defaultValue = "" + io.asymnvm.backend.mirror.AsyncLagBounds.DEFAULT_MAX_LAG_MILLIS, description = "ASYNC mirrors: most milliseconds an acknowledged commit may wait to be shipped before the mirror is reported behind, 1.." + io.asymnvm.backend.mirror.AsyncLagBounds.MAX_LAG_MILLIS + "; the shipper ships at least every quarter of it. Default: ${DEFAULT-VALUE}.")
    long asyncMaxLagMs;

    @Option(names = "--async-max-lag-tx", defaultValue = "" + io.asymnvm.backend.mirror.AsyncLagBounds.DEFAULT_MAX_LAG_TX, description = "ASYNC mirrors: most acknowledged transactions of one frontend not yet shipped before the mirror is reported behind. Default: ${DEFAULT-VALUE}.")
    long asyncMaxLagTx;

    /** The node's configuration from the options, validated completely ({@code conclude}). */
    BackendConfiguration configuration() {
        BackendConfiguration.Builder builder = BackendConfiguration.builder(pm).size(Sizes.parse(size)).port(port)
                .bindHost(host).maxFrontends(maxFrontends).mapMode(mapMode).persistence(domain, ddio)
                .serverLimits(serverLimits()).slabQuota(slabQuota)
                .catalogQuota(catalogQuota)
                .asyncLag(new io.asymnvm.backend.mirror.AsyncLagBounds(asyncMaxLagMs, asyncMaxLagTx));
        if (credentials != null) {
            builder.credentials(credentials);
        }
        if (tlsCert != null || tlsKey != null || tlsClientCa != null) {
            builder.tls(io.asymnvm.core.fabric.tcp.TcpTls.server(tlsCert, tlsKey, tlsClientCa));
        }
        return builder.insecure(insecure).conclude();
    }

    @Override
    public Integer call() throws Exception {
        if (cluster.enabled()) {
            return ClusterBackendMain.run(this, cluster);
        }
        BackendConfiguration config = configuration();
        BackendNode node = BackendNode.start(config);
        FabricProvider.Responder extra;
        try {
            extra = "tcp".equalsIgnoreCase(fabric.trim()) ? null
                    : FabricProviders.serve(fabric, strictFabric, node.nic(), new InetSocketAddress(host, rdmaPort));
        } catch (RuntimeException e) {
            node.close();
            throw e;
        }
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            if (extra != null) {
                extra.close();
            }
            node.close();
            stopped.countDown();
        }, "asymnvm-backend-shutdown"));
        System.out.println("LISTENING " + host + ":" + node.port());
        if (extra != null) {
            System.out.println("SERVING " + fabric + " AS " + extra.fabric() + " " + host + ":" + extra.port());
        }
        System.out.flush();
        stopped.await();
        return 0;
    }

    public static void main(String[] args) {
        CommandLine cl = new CommandLine(new BackendMain());
        cl.setExecutionExceptionHandler((ex, cmd, parsed) -> {
            cmd.getErr().println("asymnvm backend: " + ex.getMessage());
            return 1;
        });
        int code = cl.execute(args);
        if (code != 0) {
            System.exit(code);
        }
    }
}
