package io.asymnvm.system;

import io.asymnvm.backend.BackendConfiguration;
import io.asymnvm.backend.BackendNode;
import io.asymnvm.core.fabric.tcp.TcpServerLimits;
import io.asymnvm.frontend.AsymNvm;
import io.asymnvm.frontend.FrontendOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A frontend that is merely idle loses nothing when the backend closes its idle connection: its next
 * transaction reconnects (the ordinary reconnect path, a new attach epoch) and every committed transfer is there,
 * in this incarnation and after a restart of both sides. With a keep-alive it is not even closed. (Idle timeouts
 * of 1 s: the first attach of a cold JVM on a loaded machine must fit in one.)
 */
@Timeout(60)
class IdleTimeoutTest {
    private static final int ACCOUNTS = 8;

    @TempDir
    Path dir;

    /** With a keep-alive shorter than the backend's idle timeout, an idle frontend keeps its connection. */
    @Test
    void aKeepAliveShorterThanTheIdleTimeoutKeepsTheConnection() {
        BackendConfiguration config = BackendConfiguration.builder(dir.resolve("kept.pm")).size(64L << 20)
                .maxFrontends(2).port(0).serverLimits(TcpServerLimits.builder().idleTimeoutMillis(1_000).build())
                .conclude();
        FrontendOptions options = FrontendOptions.builder().keepAliveMillis(200).conclude();
        try (BackendNode node = BackendNode.start(config);
             AsymNvm nvm = AsymNvm.connect("127.0.0.1", node.port(), 0, options.withCredentials(node.credentialsFile()))) {
            Accounts accounts = nvm.transactional(Accounts.class, new Accounts.Impl());
            accounts.create(ACCOUNTS, 100);
            long readsBefore = nvm.counters().reads();
            long idleUntil = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(2_500); // 2.5 idle timeouts
            while (System.nanoTime() < idleUntil) {
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
            }
            assertTrue(nvm.counters().reads() > readsBefore, "no keep-alive was sent");
            accounts.transfer(0, 1, 7);
            assertEquals(93, accounts.balance(0));
            assertEquals(0, nvm.stats().reconnects(), "the connection was closed although kept alive");
        }
    }

    @Test
    void anIdleFrontendReconnectsAndLosesNothing() {
        BackendConfiguration config = BackendConfiguration.builder(dir.resolve("backend.pm")).size(64L << 20)
                .maxFrontends(2).port(0).serverLimits(TcpServerLimits.builder().idleTimeoutMillis(1_000).build())
                .conclude();
        long[] expected = new long[ACCOUNTS];
        java.util.Arrays.fill(expected, 100);
        long reconnects;
        FrontendOptions noKeepAlive = FrontendOptions.builder().keepAliveMillis(0).conclude();
        try (BackendNode node = BackendNode.start(config);
             AsymNvm nvm = AsymNvm.connect("127.0.0.1", node.port(), 0, noKeepAlive.withCredentials(node.credentialsFile()))) {
            Accounts accounts = nvm.transactional(Accounts.class, new Accounts.Impl());
            accounts.create(ACCOUNTS, 100);
            for (int round = 0; round < 2; round++) {
                for (int i = 0; i < 20; i++) {
                    accounts.transfer(i % ACCOUNTS, (i + 3) % ACCOUNTS, 1 + round);
                    expected[i % ACCOUNTS] -= 1 + round;
                    expected[(i + 3) % ACCOUNTS] += 1 + round;
                }
                long before = nvm.stats().reconnects();
                // idle past the timeout, then commit: the transfer that finds the connection closed reconnects
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                while (nvm.stats().reconnects() == before) {
                    assertTrue(System.nanoTime() < deadline, "the idle connection was never closed");
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1_200)); // past the idle timeout
                    accounts.transfer(1, 2, 5);
                    expected[1] -= 5;
                    expected[2] += 5;
                }
            }
            reconnects = nvm.stats().reconnects();
            for (int a = 0; a < ACCOUNTS; a++) {
                assertEquals(expected[a], accounts.balance(a), "account " + a);
            }
        }
        assertTrue(reconnects >= 2, "reconnects " + reconnects);
        try (BackendNode node = BackendNode.start(config);
             AsymNvm nvm = AsymNvm.connect("127.0.0.1", node.port(), 0, FrontendOptions.defaults().withCredentials(node.credentialsFile()))) {
            Accounts accounts = nvm.transactional(Accounts.class, new Accounts.Impl());
            for (int a = 0; a < ACCOUNTS; a++) {
                assertEquals(expected[a], accounts.balance(a), "account " + a + " after a restart");
            }
        }
    }
}
