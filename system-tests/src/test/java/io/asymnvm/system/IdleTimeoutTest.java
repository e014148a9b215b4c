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
 * in this incarnation and after a restart of both sides.
 */
@Timeout(60)
class IdleTimeoutTest {
    private static final int ACCOUNTS = 8;

    @TempDir
    Path dir;

    @Test
    void anIdleFrontendReconnectsAndLosesNothing() {
        BackendConfiguration config = BackendConfiguration.builder(dir.resolve("backend.pm")).size(64L << 20)
                .maxFrontends(2).port(0).serverLimits(TcpServerLimits.builder().idleTimeoutMillis(300).build())
                .conclude();
        long[] expected = new long[ACCOUNTS];
        java.util.Arrays.fill(expected, 100);
        long reconnects;
        try (BackendNode node = BackendNode.start(config);
             AsymNvm nvm = AsymNvm.connect("127.0.0.1", node.port(), 0, FrontendOptions.defaults())) {
            Accounts accounts = nvm.transactional(Accounts.class, new Accounts.Impl());
            accounts.create(ACCOUNTS, 100);
            for (int round = 0; round < 3; round++) {
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
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(600)); // twice the idle timeout
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
        assertTrue(reconnects >= 3, "reconnects " + reconnects);
        try (BackendNode node = BackendNode.start(config);
             AsymNvm nvm = AsymNvm.connect("127.0.0.1", node.port(), 0, FrontendOptions.defaults())) {
            Accounts accounts = nvm.transactional(Accounts.class, new Accounts.Impl());
            for (int a = 0; a < ACCOUNTS; a++) {
                assertEquals(expected[a], accounts.balance(a), "account " + a + " after a restart");
            }
        }
    }
}
