package io.asymnvm.backend;

import io.asymnvm.core.Sizes;
import io.asymnvm.core.fabric.PersistenceDomain;
import io.asymnvm.core.region.MappedRegion;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

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

    @Option(names = "--slab-quota", defaultValue = "0", description = "Most slabs one frontend may hold; 0 = no limit. Default: ${DEFAULT-VALUE}.")
    int slabQuota;

    @Override
    public Integer call() throws Exception {
        BackendConfiguration config = BackendConfiguration.builder(pm).size(Sizes.parse(size)).port(port)
                .bindHost(host).maxFrontends(maxFrontends).mapMode(mapMode).persistence(domain, ddio)
                .slabQuota(slabQuota).conclude();
        BackendNode node = BackendNode.start(config);
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            node.close();
            stopped.countDown();
        }, "asymnvm-backend-shutdown"));
        System.out.println("LISTENING " + host + ":" + node.port());
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
