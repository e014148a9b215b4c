package io.asymnvm.examples.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.asymnvm.core.fabric.FabricConnection;
import io.asymnvm.core.fabric.tcp.TcpFabric;
import io.asymnvm.core.layout.ControlMessageLayout;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Callable;

/**
 * {@code asymnvm status --host H --port P [--json]}: the operational state of a running backend, one line per
 * frontend (attached, attach epoch, applied transaction, quarantine with ring, offset, expected and actual values,
 * replay fault). One control call ({@link ControlMessageLayout#KIND_STATUS}); it does not attach as a frontend, so
 * an operator can run it beside the frontends. It shows operational state only (no data, no log contents).
 * Exit 0 when every listed frontend can be served, 1 when one is quarantined or its replay stopped.
 */
@Command(name = "status", mixinStandardHelpOptions = true,
        description = "Show a running backend's frontends: attached, epoch, applied tx, quarantine (exit 1 if any).")
public final class StatusCommand implements Callable<Integer> {
    @Option(names = "--host", defaultValue = "127.0.0.1", description = "backend host (default ${DEFAULT-VALUE})")
    String host;

    @Option(names = "--port", defaultValue = "0", description = "backend port (required without --zk)")
    int port;

    @Option(names = "--zk", paramLabel = "HOST:PORT,...", description = "Show the cluster configuration in this ZooKeeper instead (issue 9).")
    String zk;

    @Option(names = "--cluster", defaultValue = io.asymnvm.cluster.ClusterOptions.DEFAULT_CLUSTER_NAME, description = "Cluster name (with --zk). Default: ${DEFAULT-VALUE}.")
    String clusterName;

    @Option(names = "--json", description = "print the backend's JSON answer")
    boolean json;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() throws IOException {
        if (zk != null) {
            return ClusterNodeCommands.status(zk, clusterName, json, spec.commandLine().getOut());
        }
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("port " + port + " outside [1, 65535]");
        }
        byte[] reply;
        try (TcpFabric fabric = new TcpFabric(host, port); FabricConnection c = fabric.connect()) {
            reply = c.call(ControlMessageLayout.request(ControlMessageLayout.KIND_STATUS, -1, 0)).await().bytes();
        }
        String text = new String(reply, StandardCharsets.UTF_8);
        JsonNode status = new ObjectMapper().readTree(text);
        PrintWriter out = spec.commandLine().getOut();
        if (!json) {
            out.printf("backend %s:%d: epoch %d, image %s, %d frontend slots%n", host, port,
                    status.path("backend_epoch").asLong(), status.path("identity").asText(),
                    status.path("max_frontends").asInt());
            printReplication(status, out);
        }
        boolean healthy = print(status, json ? null : out);
        if (json) {
            out.println(text);
        }
        out.flush();
        return healthy ? 0 : 1;
    }

    /** Role, epoch and state of the node, and each mirror a backend ships to (issue 9). */
    private static void printReplication(JsonNode status, PrintWriter out) {
        if (!status.has("role")) {
            return;
        }
        out.printf("role %s, epoch %d, state %s%n", status.path("role").asText(), status.path("epoch").asLong(),
                status.path("state").asText());
        for (JsonNode m : status.path("mirrors")) {
            out.printf("mirror %s: %s (%s), %d batches / %d bytes shipped, lag %d tx, %d ms since last ship%s%n",
                    m.path("mirror").asText(), m.path("phase").asText(), m.path("state").asText(),
                    m.path("batches_shipped").asLong(), m.path("bytes_shipped").asLong(),
                    m.path("max_lag_tx").asLong(), m.path("ms_since_last_ship").asLong(),
                    m.path("problem").isNull() ? "" : ": " + m.path("problem").asText());
            if ("async".equals(m.path("mode").asText())) { // ASYNC mirrors (issue 9): the bounded lag
                out.printf("  async: %d tx unshipped, lag %d ms (bounds %d tx, %d ms)%s, bound exceeded %d times%n",
                        m.path("unshipped_tx").asLong(), m.path("lag_ms").asLong(), m.path("bound_lag_tx").asLong(),
                        m.path("bound_lag_ms").asLong(), m.path("behind").asBoolean() ? ", BEHIND" : "",
                        m.path("bound_exceeded").asLong());
            }
        }
        if (status.has("shipments_received")) { // the mirror side of the lag
            out.printf("shipments received %d, %d ms since the last%n", status.path("shipments_received").asLong(),
                    status.path("ms_since_last_shipment").asLong());
        }
    }

    /** Prints {@code status} as text to {@code out} (if not null); returns whether every frontend can be served. */
    static boolean print(JsonNode status, PrintWriter out) {
        boolean healthy = true;
        for (JsonNode f : status.path("frontends")) {
            boolean quarantined = f.path("quarantined").asBoolean();
            String fault = f.path("replay_fault").isNull() ? null : f.path("replay_fault").asText(null);
            healthy &= !quarantined && fault == null;
            if (out == null) {
                continue;
            }
            out.printf("frontend %d: %s, attach epoch %d, applied tx %d%s%s%n", f.path("id").asInt(),
                    f.path("attached").asBoolean() ? "attached" : "not attached", f.path("attach_epoch").asLong(),
                    f.path("applied_tx").asLong(),
                    quarantined ? ", QUARANTINED: " + f.path("quarantine").path("message").asText() : "",
                    fault != null ? ", replay stopped: " + fault : "");
        }
        return healthy;
    }
}
