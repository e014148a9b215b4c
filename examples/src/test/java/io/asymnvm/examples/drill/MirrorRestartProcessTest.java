package io.asymnvm.examples.drill;

import io.asymnvm.backend.BackendConfiguration;
import io.asymnvm.backend.BackendNode;
import io.asymnvm.backend.mirror.MirrorShipper;
import io.asymnvm.core.fabric.Fabric;
import io.asymnvm.core.fabric.FabricConnection;
import io.asymnvm.core.fabric.tcp.TcpFabric;
import io.asymnvm.core.layout.ControlMessageLayout;
import io.asymnvm.core.layout.ReplicationLayout;
import io.asymnvm.examples.bank.Bank;
import io.asymnvm.examples.bank.BankImpl;
import io.asymnvm.frontend.AsymNvm;
import io.asymnvm.frontend.FrontendOptions;
import io.asymnvm.mirror.ReplicationClient;
import io.asymnvm.testsupport.ShmTempDirFactory;
import io.asymnvm.testsupport.Conditions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code ./asymnvm mirror --pm F} as a real process, killed with SIGKILL and started again on the same file (issue
 * 9): with its backend serving it becomes in sync again (after a new image copy); with its backend lost for good it
 * comes back in sync from its persisted replication state, is promoted, and holds every committed transfer.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class MirrorRestartProcessTest {
    private static final int ACCOUNTS = 16;
    private static final long INITIAL = 1_000;

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    private static int freePort() throws Exception {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    private static String status(int port) {
        try (Fabric f = new TcpFabric("127.0.0.1", port); FabricConnection c = f.connect()) {
            return new String(c.call(ControlMessageLayout.request(ControlMessageLayout.KIND_STATUS, 0, 0)).await()
                    .bytes(), StandardCharsets.UTF_8);
        } catch (RuntimeException e) {
            return "unreachable: " + e.getMessage();
        }
    }

    private static boolean inSync(int port) {
        return status(port).contains("\"state\":\"" + ReplicationLayout.stateName(ReplicationLayout.STATE_IN_SYNC)
                + "\"");
    }

    private CliProcess startMirror(Path pm, int port, int backendPort, Path credentials, Path log) {
        CliProcess p = CliProcess.start("mirror", List.of("mirror", "--pm", pm.toString(), "--port",
                Integer.toString(port), "--backend", "127.0.0.1:" + backendPort, "--credentials",
                credentials.toString()), log, null);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        for (CliProcess.Line l = p.nextLine(deadline); !l.eof(); l = p.nextLine(deadline)) {
            if (l.text().startsWith("LISTENING ")) {
                return p;
            }
        }
        throw new AssertionError("the mirror exited before it listened" + p.logTail());
    }

    /** The image copies the backend made for its mirrors, from its status reply. */
    private static long copies(int backendPort) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("\"copies\":(\\d+)")
                .matcher(status(backendPort));
        long n = 0;
        while (m.find()) {
            n += Long.parseLong(m.group(1));
        }
        return n;
    }

    @Test
    void killedMirrorRestartsOnItsFileInSyncAndIsPromotedOnceItsBackendIsLost() throws Exception {
        Path credentials = dir.resolve("cluster.credentials");
        Path backendPm = dir.resolve("backend.pm");
        Path mirrorPm = dir.resolve("mirror.pm");
        Path log = dir.resolve("mirror.log");
        BackendNode backend = BackendNode.start(BackendConfiguration.builder(backendPm).size(24L << 20)
                .maxFrontends(2).semRingCapacity(256L << 10).redoRingCapacity(1L << 20).port(0)
                .credentials(credentials).conclude());
        int backendPort = backend.port();
        int mirrorPort = freePort();
        FrontendOptions options = FrontendOptions.builder().credentials(credentials).conclude();
        long[] expected = new long[ACCOUNTS];
        CliProcess mirror = startMirror(mirrorPm, mirrorPort, backendPort, credentials, log);
        try {
            Conditions.awaitTrue("the mirror process is in sync", () -> inSync(mirrorPort));
            try (AsymNvm nvm = AsymNvm.connect("127.0.0.1", backendPort, 0, options)) {
                Bank bank = nvm.transactional(Bank.class, new BankImpl());
                bank.open(ACCOUNTS, INITIAL);
                java.util.Arrays.fill(expected, INITIAL);
                for (int i = 0; i < 200; i++) {
                    int from = i % ACCOUNTS;
                    int to = (i * 7 + 3) % ACCOUNTS;
                    bank.transfer(from, to, 1 + i % 13);
                    expected[from] -= 1 + i % 13;
                    expected[to] += 1 + i % 13;
                }
                nvm.sync();
            }
            backend.awaitReplayed();
            long applied = backend.frontendLog(0).checkpoint().appliedTxId();
            Conditions.awaitTrue("the mirror shipped every transaction", () -> backend.replication().shippers().stream()
                    .allMatch(s -> s.lagTransactions(0) == 0 && s.mirrorState() == ReplicationLayout.STATE_IN_SYNC));

            // 1. SIGKILL, restart on the same file while the backend serves: in sync again (after a new copy)
            long copiesBefore = copies(backendPort);
            mirror.kill();
            mirror = startMirror(mirrorPm, mirrorPort, backendPort, credentials, log);
            Conditions.awaitTrue("the restarted mirror is in sync again", () -> inSync(mirrorPort));
            System.out.printf("restarted mirror in sync again after %d image copies (before the kill: %d), %d "
                    + "bytes shipped%n", copies(backendPort), copiesBefore,
                    backend.replication().shippers().stream().mapToLong(MirrorShipper::bytesShipped).sum());
            Conditions.awaitTrue("the restarted mirror applied every transaction",
                    () -> backend.replication().shippers().stream()
                    .allMatch(s -> s.lagTransactions(0) == 0 && s.mirrorState() == ReplicationLayout.STATE_IN_SYNC));

            // 2. SIGKILL again, the backend is lost for good, restart: in sync from its persisted state
            mirror.kill();
            backend.close();
            Files.delete(backendPm);
            mirror = startMirror(mirrorPm, mirrorPort, backendPort, credentials, log);
            String st = status(mirrorPort);
            assertTrue(st.contains("\"role\":\"mirror\"") && inSync(mirrorPort),
                    "a mirror killed in sync restarts in sync without its backend: " + st);
            try (Fabric f = new TcpFabric("127.0.0.1", mirrorPort)) {
                assertEquals(2, ReplicationClient.promote(f, ReplicationClient.secretOf(credentials)),
                        "the promoted epoch");
            }
            try (AsymNvm nvm = AsymNvm.connect("127.0.0.1", mirrorPort, 0, options)) {
                Bank bank = nvm.transactional(Bank.class, new BankImpl());
                nvm.recover();
                for (int a = 0; a < ACCOUNTS; a++) {
                    assertEquals(expected[a], bank.balance(a), "account " + a + " on the promoted mirror (applied "
                            + "tx " + applied + " on the lost backend)");
                }
                bank.transfer(0, 1, 5);
                assertEquals(expected[1] + 5, bank.balance(1), "a transfer after promotion");
            }
        } finally {
            mirror.kill();
            backend.close();
        }
    }
}
