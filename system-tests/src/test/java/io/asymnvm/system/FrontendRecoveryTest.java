package io.asymnvm.system;

import io.asymnvm.backend.BackendConfiguration;
import io.asymnvm.backend.BackendNode;
import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.frontend.AsymNvm;
import io.asymnvm.frontend.FrontendOptions;
import io.asymnvm.frontend.PersistentTransaction;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Frontend crash recovery in one JVM: a frontend commits transfers whose redo is still buffered, "crashes"
 * (drops everything in DRAM without flushing), and a new incarnation with the same id re-executes the
 * semantic records after the backend's applied transaction before serving new calls.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class FrontendRecoveryTest {
    private static final int ACCOUNTS = 16;

    @TempDir
    Path dir;

    /** Keeps redo in the frontend's buffer: large batches, long delay. */
    private static FrontendOptions lazyRedo() {
        return FrontendOptions.builder().redoBatch(1 << 20, 1 << 20, 10_000_000).conclude();
    }

    private BackendNode startNode() {
        return BackendNode.start(BackendConfiguration.builder(dir.resolve("backend.pm")).size(256L << 20)
                .conclude());
    }

    @Test
    void shouldReexecuteAcknowledgedTransactionsAfterFrontendCrash() {
        long seed = 42;
        Random random = new Random(seed);
        long[] oracle = new long[ACCOUNTS];
        java.util.Arrays.fill(oracle, 1000);
        try (BackendNode node = startNode()) {
            AsymNvm first = AsymNvm.open(node.localFabric(), 0, lazyRedo());
            Accounts a = first.transactional(Accounts.class, new Accounts.Impl());
            a.create(ACCOUNTS, 1000);
            first.sync();
            for (int i = 0; i < 500; i++) {
                int from = random.nextInt(ACCOUNTS);
                int to = random.nextInt(ACCOUNTS);
                long amount = 1 + random.nextInt(100);
                a.transfer(from, to, amount);
                oracle[from] -= amount;
                oracle[to] += amount;
            }
            long lastTx = first.stats().lastTxId();
            assertTrue(first.stats().appliedTxId() < lastTx, "redo must still be unapplied for this test");
            first.crash();

            AsymNvm second = AsymNvm.open(node.localFabric(), 0, lazyRedo());
            Accounts b = second.transactional(Accounts.class, new Accounts.Impl());
            var report = second.recover();
            assertTrue(report.transactions() > 0, "nothing re-executed: " + report);
            assertEquals(lastTx, report.lastTxId(), "recovery must end at the last logged transaction");
            for (int i = 0; i < ACCOUNTS; i++) {
                assertEquals(oracle[i], b.balance(i), "account " + i + " (seed " + seed + ")");
            }
            b.transfer(0, 1, 5);
            oracle[0] -= 5;
            oracle[1] += 5;
            assertEquals(lastTx + 1, second.stats().lastTxId(), "new transactions continue the id sequence");
            second.close();

            try (AsymNvm third = AsymNvm.open(node.localFabric(), 0, FrontendOptions.defaults())) {
                Accounts c = third.transactional(Accounts.class, new Accounts.Impl());
                assertEquals(0, third.recover() == null ? 0 : third.recover().transactions());
                for (int i = 0; i < ACCOUNTS; i++) {
                    assertEquals(oracle[i], c.balance(i), "account " + i + " after clean close");
                }
            }
        }
    }

    @Test
    void shouldBeIdempotentWhenRecoveryCrashes() {
        long[] oracle = new long[ACCOUNTS];
        java.util.Arrays.fill(oracle, 1000);
        try (BackendNode node = startNode()) {
            AsymNvm first = AsymNvm.open(node.localFabric(), 0, lazyRedo());
            Accounts a = first.transactional(Accounts.class, new Accounts.Impl());
            a.create(ACCOUNTS, 1000);
            first.sync();
            for (int i = 0; i < 300; i++) {
                a.transfer(i % ACCOUNTS, (i * 7 + 3) % ACCOUNTS, i);
                oracle[i % ACCOUNTS] -= i;
                oracle[(i * 7 + 3) % ACCOUNTS] += i;
            }
            first.crash();
            // Recover with small redo batches, then crash again before closing: part of the re-executed redo is
            // applied, part is not.
            AsymNvm second = AsymNvm.open(node.localFabric(), 0,
                    FrontendOptions.builder().redoBatch(16, 1 << 20, 10_000_000).conclude());
            second.transactional(Accounts.class, new Accounts.Impl());
            second.recover();
            second.crash();
            try (AsymNvm third = AsymNvm.open(node.localFabric(), 0, FrontendOptions.defaults())) {
                Accounts c = third.transactional(Accounts.class, new Accounts.Impl());
                third.recover();
                for (int i = 0; i < ACCOUNTS; i++) {
                    assertEquals(oracle[i], c.balance(i), "account " + i + " after recovery crashed once");
                }
            }
        }
    }

    /** A method the crashed incarnation used but the new one does not register. */
    public interface Other {
        @PersistentTransaction
        void touch(long v);
    }

    @Test
    void shouldRefuseRecoveryWhenAMethodIsMissing() {
        try (BackendNode node = startNode()) {
            AsymNvm first = AsymNvm.open(node.localFabric(), 0, lazyRedo());
            Accounts a = first.transactional(Accounts.class, new Accounts.Impl());
            a.create(ACCOUNTS, 1000);
            first.sync();
            a.transfer(1, 2, 3);
            first.crash();
            AsymNvm second = AsymNvm.open(node.localFabric(), 0, lazyRedo());
            second.transactional(Other.class, v -> { });
            AsymNvmException e = assertThrows(AsymNvmException.class, second::recover);
            assertEquals(ErrorCode.RECOVERY_REQUIRED, e.errorCode());
            assertTrue(e.getMessage().contains("not registered"), e.getMessage());
            second.crash();
        }
    }
}
