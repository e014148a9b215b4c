package io.asymnvm.system;

import io.asymnvm.backend.BackendConfiguration;
import io.asymnvm.backend.BackendNode;
import io.asymnvm.backend.log.FrontendLog;
import io.asymnvm.core.layout.RegionIds;
import io.asymnvm.frontend.AsymNvm;
import io.asymnvm.frontend.FrontendOptions;
import io.asymnvm.recovery.log.RingReader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Torn network writes (issue 4, item 4): a {@link FaultInjectingFabric} lands only a prefix of one semantic
 * record and fails the connection. A frontend that crashes right then recovers as if the record had never been
 * written; one that lives reconnects, writes the record again and commits; a backend restarted over the torn
 * tail truncates it and serves. Each scenario runs for several seeds (prefix length and which write is torn);
 * the seed is in every message.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class TornWriteTest {
    private static final int ACCOUNTS = 8;
    private static final long INITIAL = 1_000_000;
    private static final int TRANSFERS = 200;
    private static final int SEEDS = 8;

    @TempDir
    Path dir;

    private final FrontendOptions options = FrontendOptions.builder().reconnectTimeoutMillis(5_000).conclude();

    private BackendConfiguration config(long seed) {
        return BackendConfiguration.builder(dir.resolve("torn-" + seed + ".pm")).size(8 << 20).maxFrontends(2)
                .semRingCapacity(16 << 10).redoRingCapacity(16 << 10).slabSize(64 << 10).conclude();
    }

    /** A frontend with the bank and the read-only probe registered. */
    private record Bank(AsymNvm nvm, Accounts accounts, Ledger ledger) {
        static Bank open(io.asymnvm.core.fabric.Fabric fabric, FrontendOptions options) {
            AsymNvm nvm = AsymNvm.open(fabric, 0, options);
            return new Bank(nvm, nvm.transactional(Accounts.class, new Accounts.Impl()),
                    nvm.transactional(Ledger.class, new Ledger.Impl()));
        }
    }

    /** What the workload saw: the oracle of acknowledged transfers and the id of the torn transaction. */
    private record Outcome(long[] oracle, int acknowledged, long tornTxId, FaultInjectingFabric.TornWrite torn) {
    }

    /**
     * Creates the accounts, arms the tear of a random semantic write, and runs transfers until one fails or all
     * are done; {@code crashOnTear} crashes the frontend from the fabric's callback, before it can reconnect.
     */
    private Outcome runTorn(BackendNode node, long seed, boolean crashOnTear) {
        Random random = new Random(seed);
        FaultInjectingFabric fabric = new FaultInjectingFabric(node.localFabric());
        Bank bank = Bank.open(fabric, options);
        bank.accounts().create(ACCOUNTS, INITIAL);
        bank.nvm().sync();
        AtomicReference<AsymNvm> victim = new AtomicReference<>(crashOnTear ? bank.nvm() : null);
        fabric.tearSemanticWrite(random.nextInt(TRANSFERS), random, t -> {
            if (victim.get() != null) {
                victim.get().crash();
            }
        });
        long[] oracle = PowerFailureRig.initialBalances();
        int acknowledged = 0;
        long tornTxId = -1;
        for (int i = 0; i < TRANSFERS; i++) {
            int from = random.nextInt(ACCOUNTS);
            int to = random.nextInt(ACCOUNTS);
            long amount = 1 + random.nextInt(1000);
            try {
                bank.accounts().transfer(from, to, amount);
            } catch (RuntimeException e) {
                assertTrue(crashOnTear && fabric.torn() != null, () -> "transfer failed without a crash (seed "
                        + seed + "): " + e);
                tornTxId = bank.nvm().stats().lastTxId();
                break;
            }
            new PowerFailureRig.Transfer(from, to, amount).applyTo(oracle);
            acknowledged++;
        }
        assertNotNull(fabric.torn(), "no semantic write was torn (seed " + seed + ")");
        if (!crashOnTear) {
            assertTrue(bank.nvm().stats().reconnects() >= 1, "the frontend must have reconnected (seed " + seed
                    + ")");
            bank.nvm().close();
        }
        return new Outcome(oracle, acknowledged, tornTxId, fabric.torn());
    }

    @Test
    void shouldTreatATornRecordAsNeverWrittenWhenTheFrontendCrashes() {
        for (long seed = 1; seed <= SEEDS; seed++) {
            try (BackendNode node = BackendNode.start(config(seed))) {
                Outcome o = runTorn(node, seed, true);
                assertTrue(o.tornTxId() > 0, "the torn transfer must have failed (seed " + seed + ", " + o.torn()
                        + ")");
                Bank next = Bank.open(node.localFabric(), options);
                next.nvm().recover();
                String where = " (seed " + seed + ", " + o.acknowledged() + " acknowledged, " + o.torn() + ")";
                assertArrayEquals(o.oracle(), next.ledger().balances(),
                        "the acknowledged transfers and nothing of the torn one" + where);
                assertEquals(o.tornTxId() - 1, next.nvm().stats().lastTxId(),
                        "recovery must end before the torn transaction" + where);
                next.accounts().transfer(0, 1, 5);
                assertEquals(o.tornTxId(), next.nvm().stats().lastTxId(),
                        "the torn transaction's id is free again" + where);
                long[] expected = o.oracle().clone();
                new PowerFailureRig.Transfer(0, 1, 5).applyTo(expected);
                assertArrayEquals(expected, next.ledger().balances(), "a transfer after recovery" + where);
                next.nvm().close();
            }
        }
    }

    @Test
    void shouldRepostATornRecordAfterReconnecting() {
        for (long seed = 101; seed < 101 + SEEDS; seed++) {
            BackendConfiguration config = config(seed);
            Outcome o;
            try (BackendNode node = BackendNode.start(config)) {
                o = runTorn(node, seed, false);
                assertEquals(TRANSFERS, o.acknowledged(), "every transfer commits (seed " + seed + ")");
                try (AsymNvm again = AsymNvm.open(node.localFabric(), 0, options)) {
                    Ledger ledger = again.transactional(Ledger.class, new Ledger.Impl());
                    assertArrayEquals(o.oracle(), ledger.balances(), "after a clean close and reopen, the torn "
                            + "transfer is present (seed " + seed + ", " + o.torn() + ")");
                }
            }
            try (BackendNode node = BackendNode.start(config);
                 AsymNvm again = AsymNvm.open(node.localFabric(), 0, options)) {
                Ledger ledger = again.transactional(Ledger.class, new Ledger.Impl());
                assertArrayEquals(o.oracle(), ledger.balances(), "after a backend restart (seed " + seed + ")");
            }
        }
    }

    @Test
    void shouldReportATornTailOnBackendRestart() {
        for (long seed = 201; seed < 201 + SEEDS; seed++) {
            BackendConfiguration config = config(seed);
            Outcome o;
            try (BackendNode node = BackendNode.start(config)) {
                o = runTorn(node, seed, true);
            }
            String where = " (seed " + seed + ", " + o.acknowledged() + " acknowledged, " + o.torn() + ")";
            try (BackendNode node = BackendNode.start(config)) {
                FrontendLog log = node.frontendLog(0);
                FrontendLog.SemanticTail tail = log.scanSemantic();
                assertEquals(o.torn().offset(), Math.floorMod(tail.tail(), config.semRingCapacity()),
                        "the valid tail ends where the torn record starts" + where);
                assertEquals(RingReader.Kind.INVALID, log.semanticReader().read(tail.tail()).kind(),
                        "the torn record does not validate" + where);
                assertEquals(RegionIds.semantic(0), o.torn().regionId());
                Bank next = Bank.open(node.localFabric(), options);
                next.nvm().recover();
                assertTrue(Arrays.equals(o.oracle(), next.ledger().balances()),
                        () -> "attach and recovery after the restart: " + Arrays.toString(next.ledger().balances())
                                + " != " + Arrays.toString(o.oracle()) + where);
                next.accounts().transfer(2, 3, 7);
                next.nvm().close();
            }
        }
    }
}
