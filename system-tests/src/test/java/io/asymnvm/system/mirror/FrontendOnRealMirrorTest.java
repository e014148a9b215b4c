package io.asymnvm.system.mirror;

import io.asymnvm.backend.BackendConfiguration;
import io.asymnvm.backend.BackendNode;
import io.asymnvm.frontend.AsymNvm;
import io.asymnvm.frontend.FrontendOptions;
import io.asymnvm.frontend.PersistentTransaction;
import io.asymnvm.frontend.Transaction;
import io.asymnvm.mirror.MirrorNode;
import io.asymnvm.testsupport.Conditions;
import io.asymnvm.testsupport.ShmTempDirFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * End to end over tcp with the real mirror node: a SYNC frontend (records posted to backend and mirror, ring space
 * released at the minimum) commits transfers, the backend is lost with its PM file, and while a thread keeps
 * committing the mirror is promoted: the frontend fails over by itself and every acknowledged transfer is there.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class FrontendOnRealMirrorTest {
    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    public interface Cells {
        @PersistentTransaction
        void create(int n);

        @PersistentTransaction
        void add(int from, int to, long amount);

        @PersistentTransaction(readOnly = true)
        long[] snapshot();
    }

    static final class CellsImpl implements Cells {
        public void create(int n) {
            Transaction tx = Transaction.current();
            long b = tx.allocate(8L + 8L * n);
            tx.writeLong(b, n);
            tx.setRoot(b);
        }

        public void add(int from, int to, long amount) {
            Transaction tx = Transaction.current();
            long r = tx.root();
            tx.writeLong(r + 8 + 8L * from, tx.readLong(r + 8 + 8L * from) - amount);
            tx.writeLong(r + 8 + 8L * to, tx.readLong(r + 8 + 8L * to) + amount);
        }

        public long[] snapshot() {
            Transaction tx = Transaction.current();
            long r = tx.root();
            long[] out = new long[(int) tx.readLong(r)];
            for (int i = 0; i < out.length; i++) {
                out[i] = tx.readLong(r + 8 + 8L * i);
            }
            return out;
        }
    }

    private BackendConfiguration config(String name) {
        return BackendConfiguration.builder(dir.resolve(name)).size(48L << 20).maxFrontends(2)
                .semRingCapacity(1L << 20).redoRingCapacity(4L << 20).port(0)
                .credentials(dir.resolve("shared.credentials")).conclude();
    }

    @Test
    void commitsReachTheMirrorAndSurviveItsPromotion() throws Exception {
        BackendNode backend = BackendNode.start(config("backend.pm"));
        try (MirrorNode mirror = MirrorNode.startLocal(config("mirror.pm"), backend)) {
            Conditions.awaitTrue("the mirror is in sync", mirror::inSync);
            FrontendOptions options = FrontendOptions.builder().reconnectTimeoutMillis(300)
                    .credentials(dir.resolve("shared.credentials"))
                    .failoverTimeoutMillis(20_000).conclude();
            try (AsymNvm nvm = AsymNvm.connect("tcp", "127.0.0.1:" + backend.port(),
                    List.of("127.0.0.1:" + mirror.node().port()), 0, options)) {
                Cells cells = nvm.transactional(Cells.class, new CellsImpl());
                cells.create(8);
                long[] expected = new long[8];
                for (int i = 0; i < 3000; i++) {
                    cells.add(i % 8, (i + 3) % 8, i);
                    expected[i % 8] -= i;
                    expected[(i + 3) % 8] += i;
                }
                System.out.println("before failover: " + nvm.stats());
                backend.close(); // lost, and its PM file with it
                java.nio.file.Files.delete(dir.resolve("backend.pm"));
                CompletableFuture<Long> promote = CompletableFuture.supplyAsync(mirror::promote);
                for (int i = 0; i < 500; i++) {
                    cells.add(i % 8, (i + 5) % 8, 1);
                    expected[i % 8] -= 1;
                    expected[(i + 5) % 8] += 1;
                }
                System.out.println("promoted to epoch " + promote.get(20, TimeUnit.SECONDS) + "; " + nvm.stats());
                assertEquals(1, nvm.stats().failovers());
                org.junit.jupiter.api.Assertions.assertArrayEquals(expected, cells.snapshot());
            }
        } finally {
            backend.close();
        }
    }
}
