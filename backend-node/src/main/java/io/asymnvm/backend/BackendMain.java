package io.asymnvm.backend;

import io.asymnvm.core.Sizes;
import io.asymnvm.core.fabric.FabricProvider;
import io.asymnvm.core.fabric.FabricProviders;
import io.asymnvm.core.fabric.PersistenceDomain;
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

    // ---- a second responder through the fabric SPI (rdma: the asymnvm-rdma module on the class path) ----

    @Option(names = "--fabric", defaultValue = "tcp", description = "Also serve this fabric: tcp (only the TCP port) or rdma (on --rdma-port; falls back to a TCP responder there, with a warning, where rdma cannot run). Default: ${DEFAULT-VALUE}.")
    String fabric;

    @Option(names = "--rdma-port", defaultValue = "7001", description = "Port of the rdma responder (--fabric rdma). Default: ${DEFAULT-VALUE}.")
    int rdmaPort;

    @Option(names = "--strict-fabric", description = "Refuse to start when the --fabric cannot run here instead of falling back to tcp.")
    boolean strictFabric;

    @Override
    public Integer call() throws Exception {
        BackendConfiguration config = BackendConfiguration.builder(pm).size(Sizes.parse(size)).port(port)
                .bindHost(host).maxFrontends(maxFrontends).mapMode(mapMode).persistence(domain, ddio).conclude();
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
