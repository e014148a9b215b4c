package io.asymnvm.frontend;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.fabric.FabricConnection;
import io.asymnvm.core.layout.ControlMessageLayout;
import io.asymnvm.core.layout.ControlMessageLayout.AttachReply;
import io.asymnvm.core.layout.RegionIds;
import io.asymnvm.frontend.log.RedoBuffer;
import io.asymnvm.frontend.tx.EngineStats;
import io.asymnvm.frontend.tx.TransactionEngine;
import io.asymnvm.testsupport.Conditions;
import io.asymnvm.testsupport.ShmTempDirFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A frontend that crashed with committed transactions whose redo the backend never received leaves their
 * semantic records after the backend's applied transaction. The next incarnation re-executes exactly that range
 * before its first call (DESIGN §4); when it cannot (a method fails on re-execution, or replay stopped on a
 * batch it must not apply) every call is refused with {@code RECOVERY_REQUIRED} naming what is wrong, and the
 * log stays intact for an incarnation that can.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RecoveryRequiredTest {
    private static final int CELLS = 32;
    /** Redo stays in the frontend's buffer: no batch is shipped by count, size or age during a test. */
    private static final FrontendOptions LAZY_REDO = FrontendOptions.builder()
            .redoBatch(1 << 20, 16 << 20, 10_000_000).conclude();

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    /** What a crashed incarnation left behind: the oracle and the range of unapplied transactions. */
    private record Crashed(long[] oracle, long firstUnapplied, long lastTx) {
    }

    /** Creates the cells (applied), then commits {@code n} random writes that stay unapplied, then crashes. */
    private Crashed commitThenCrash(long seed, int n, Durability durability) {
        Random random = new Random(seed);
        long[] oracle = new long[CELLS];
        AsymNvm nvm = AsymNvm.embedded(dir, LAZY_REDO);
        Cells cells = nvm.transactional(Cells.class, new Cells.Impl());
        cells.create(CELLS);
        nvm.sync();
        for (int i = 0; i < n; i++) {
            int index = random.nextInt(CELLS);
            long value = random.nextLong();
            if (durability == Durability.SYNC) {
                cells.set(index, value);
            } else {
                cells.setAsync(index, value);
            }
            oracle[index] = value;
        }
        EngineStats stats = nvm.stats();
        if (durability == Durability.ASYNC) {
            Conditions.awaitTrue("background durability", Duration.ofSeconds(20),
                    () -> nvm.stats().durableTxId() >= stats.lastTxId(), () -> nvm.stats().toString());
        }
        assertEquals(stats.lastTxId() - n, nvm.stats().appliedTxId(), "redo must still be unapplied: " + stats);
        nvm.crash();
        return new Crashed(oracle, stats.lastTxId() - n + 1, stats.lastTxId());
    }

    /** A {@link Cells} whose {@code set} now fails: code that changed between the crash and the restart. */
    private static Cells changedCode() {
        Cells real = new Cells.Impl();
        return (Cells) Proxy.newProxyInstance(Cells.class.getClassLoader(), new Class<?>[] {Cells.class},
                (proxy, method, args) -> {
                    if (method.getName().equals("set")) {
                        throw new UnsupportedOperationException("set was removed");
                    }
                    try {
                        return method.invoke(real, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }

    @Test
    void shouldReexecuteExactlyTheUnappliedSyncCommitsBeforeTheFirstCall() {
        long seed = 0x5EED_0007L;
        Crashed crashed = commitThenCrash(seed, 50, Durability.SYNC);
        try (AsymNvm nvm = AsymNvm.embedded(dir, LAZY_REDO)) {
            Cells cells = nvm.transactional(Cells.class, new Cells.Impl());
            assertArrayEquals(crashed.oracle(), cells.snapshot(), "seed " + seed);
            TransactionEngine.RecoveryReport report = nvm.recover();
            assertEquals(50, report.transactions(), report.toString());
            assertEquals(crashed.firstUnapplied(), report.firstTxId(), report.toString());
            assertEquals(crashed.lastTx(), report.lastTxId(), report.toString());
            cells.set(0, 1);
            crashed.oracle()[0] = 1;
            assertEquals(crashed.lastTx() + 1, nvm.stats().lastTxId(), "new transactions continue the id sequence");
        }
        try (AsymNvm nvm = AsymNvm.embedded(dir)) {
            Cells cells = nvm.transactional(Cells.class, new Cells.Impl());
            assertArrayEquals(crashed.oracle(), cells.snapshot(), "after a clean close, seed " + seed);
            assertEquals(crashed.lastTx() + 1, nvm.stats().appliedTxId());
        }
    }

    @Test
    void shouldReexecuteDurableAsyncCommitsWhenTheFirstCallWrites() {
        long seed = 0x5EED_0008L;
        Crashed crashed = commitThenCrash(seed, 40, Durability.ASYNC);
        try (AsymNvm nvm = AsymNvm.embedded(dir, LAZY_REDO)) {
            Cells cells = nvm.transactional(Cells.class, new Cells.Impl());
            cells.add(0, 1, 5);
            crashed.oracle()[0] -= 5;
            crashed.oracle()[1] += 5;
            TransactionEngine.RecoveryReport report = nvm.recover();
            assertEquals(crashed.firstUnapplied(), report.firstTxId(), report.toString());
            assertEquals(crashed.lastTx(), report.lastTxId(), report.toString());
            assertArrayEquals(crashed.oracle(), cells.snapshot(), "seed " + seed);
        }
    }

    @Test
    void shouldRefuseEveryCallWhenReexecutionFailsAndKeepTheLogForAFixedIncarnation() {
        long seed = 0x5EED_0009L;
        Crashed crashed = commitThenCrash(seed, 20, Durability.SYNC);

        AsymNvm broken = AsymNvm.embedded(dir, LAZY_REDO);
        Cells cells = broken.transactional(Cells.class, changedCode());
        AsymNvmException e = assertThrows(AsymNvmException.class, () -> cells.get(0));
        assertEquals(ErrorCode.RECOVERY_REQUIRED, e.errorCode(), e.getMessage());
        assertTrue(e.getMessage().contains("tx " + crashed.firstUnapplied())
                && e.getMessage().contains(Cells.class.getName() + "#set(int,long)")
                && e.getMessage().contains("set was removed"), e.getMessage());
        AsymNvmException again = assertThrows(AsymNvmException.class, () -> cells.set(1, 1));
        assertEquals(ErrorCode.RECOVERY_REQUIRED, again.errorCode(), "no new transaction before recovery: " + again);
        assertEquals(0, broken.stats().commits(), "nothing committed by the broken incarnation");
        broken.crash();

        try (AsymNvm fixed = AsymNvm.embedded(dir, LAZY_REDO)) {
            Cells good = fixed.transactional(Cells.class, new Cells.Impl());
            assertArrayEquals(crashed.oracle(), good.snapshot(), "seed " + seed);
            assertEquals(crashed.lastTx(), fixed.recover().lastTxId());
        }
    }

    @Test
    void shouldRefuseAFrontendWhoseReplayStoppedOnAForbiddenBatch() {
        int frontend = 5;
        try (TestBackend backend = TestBackend.start(dir, TestBackend.Transport.LOCAL)) {
            // A rogue writer attached as frontend 5 ships a CRC-valid redo batch that writes heap offset 0, a slab
            // frontend 5 was never granted: the replayer must stop for that frontend only.
            FabricConnection rogue = backend.node().localFabric().connect();
            try {
                AttachReply r = AttachReply.decode(rogue.call(ControlMessageLayout.request(
                        ControlMessageLayout.KIND_ATTACH, frontend, 0)).await().bytes());
                RedoBuffer batch = new RedoBuffer(4096);
                batch.append(r.appliedTxId() + 1, List.of(new RedoBuffer.Write(0, new byte[8])), 0);
                byte[] record = batch.seal(r.redoValidTail());
                rogue.write(RegionIds.redo(frontend), r.redoValidTail() % r.redoCapacity(), record, 0, record.length)
                        .await();
                rogue.flush(0, false).await();
            } finally {
                rogue.close();
            }

            AsymNvmException e = assertThrows(AsymNvmException.class,
                    () -> backend.open(frontend, FrontendOptions.defaults()));
            assertEquals(ErrorCode.RECOVERY_REQUIRED, e.errorCode(), e.getMessage());
            assertTrue(e.getMessage().contains("frontend " + frontend)
                    && e.getMessage().contains("[0, 8) outside the slabs granted"), e.getMessage());

            try (AsymNvm other = backend.open(0, FrontendOptions.defaults())) {
                Cells cells = other.transactional(Cells.class, new Cells.Impl());
                cells.create(4);
                cells.set(2, 2);
                other.sync();
                assertEquals(2, cells.get(2), "other frontends are unaffected");
            }
        }
    }
}
