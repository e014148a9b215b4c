package io.asymnvm.system;

import io.asymnvm.backend.BackendConfiguration;
import io.asymnvm.backend.BackendNode;
import io.asymnvm.frontend.AsymNvm;
import io.asymnvm.frontend.FrontendOptions;
import io.asymnvm.mirror.MirrorNode;
import io.asymnvm.system.PowerFailureRig.Transfer;
import io.asymnvm.testsupport.Conditions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Composed failures: a semantic record WRITE to the SYNC mirror lands only a prefix ({@link FaultInjectingFabric};
 * the backend got the whole record), then the backend is lost for good and the mirror promoted. If the frontend
 * crashed at the tear, the new incarnation on the promoted mirror must see every acknowledged transfer and the
 * torn one entirely or not at all (the backend may have applied it and shipped its redo before it was lost). If
 * the frontend lived, it reconnected the mirror and wrote the record again; after all transfers it crashes, and the
 * promoted mirror must hold every one of them. Several seeds (which write is torn, how much of it landed).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class TornMirrorRecordTest {
    private static final int TRANSFERS = 120;
    private static final int SEEDS = 4;

    @TempDir
    Path dir;

    private final FrontendOptions options = FrontendOptions.builder().reconnectTimeoutMillis(5_000)
            .mirrorReconnectTimeoutMillis(5_000).conclude();

    private BackendConfiguration config(String name) {
        return BackendConfiguration.builder(dir.resolve(name)).size(8 << 20).maxFrontends(2)
                .semRingCapacity(16 << 10).redoRingCapacity(16 << 10).slabSize(64 << 10).conclude();
    }

    private record Bank(AsymNvm nvm, Accounts accounts, Ledger ledger) {
        static Bank open(io.asymnvm.core.fabric.Fabric backend, List<io.asymnvm.core.fabric.Fabric> mirrors,
                         FrontendOptions options) {
            AsymNvm nvm = AsymNvm.open(backend, mirrors, 0, options);
            return new Bank(nvm, nvm.transactional(Accounts.class, new Accounts.Impl()),
                    nvm.transactional(Ledger.class, new Ledger.Impl()));
        }
    }

    /** The transfers until one fails (the torn one, returned) or all are done (null); acknowledged go to oracle. */
    private static Transfer transfers(Bank bank, Random random, long[] oracle, FaultInjectingFabric fabric,
                                      boolean crashOnTear, long seed) {
        for (int i = 0; i < TRANSFERS; i++) {
            Transfer t = new Transfer(random.nextInt(PowerFailureRig.ACCOUNTS),
                    random.nextInt(PowerFailureRig.ACCOUNTS), 1 + random.nextInt(1000));
            try {
                bank.accounts().transfer(t.from(), t.to(), t.amount());
            } catch (RuntimeException e) {
                assertTrue(crashOnTear && fabric.torn() != null, () -> "transfer failed without a crash (seed "
                        + seed + "): " + e);
                return t;
            }
            t.applyTo(oracle);
        }
        return null;
    }

    /** One seed: the tear, the frontend's crash, the backend's loss, the promotion and the checks. */
    private void run(long seed, boolean crashOnTear) throws Exception {
        Random random = new Random(seed);
        String pm = "backend-" + seed + ".pm";
        BackendNode backend = BackendNode.start(config(pm));
        try (MirrorNode mirror = MirrorNode.startLocal(config("mirror-" + seed + ".pm"), backend)) {
            Conditions.awaitTrue("the mirror is in sync", Duration.ofSeconds(20), mirror::inSync);
            FaultInjectingFabric toMirror = new FaultInjectingFabric(mirror.localFabric());
            Bank bank = Bank.open(backend.localFabric(), List.of(toMirror), options);
            bank.accounts().create(PowerFailureRig.ACCOUNTS, PowerFailureRig.INITIAL);
            bank.nvm().sync();
            AtomicReference<AsymNvm> victim = new AtomicReference<>(crashOnTear ? bank.nvm() : null);
            toMirror.tearSemanticWrite(random.nextInt(TRANSFERS), random, t -> {
                if (victim.get() != null) {
                    victim.get().crash();
                }
            });
            long[] oracle = PowerFailureRig.initialBalances();
            Transfer torn = transfers(bank, random, oracle, toMirror, crashOnTear, seed);
            assertNotNull(toMirror.torn(), "no semantic write to the mirror was torn (seed " + seed + ")");
            String where = " (seed " + seed + ", " + toMirror.torn() + ", torn transfer " + torn + ")";
            if (!crashOnTear) {
                assertEquals(null, torn, "every transfer commits" + where);
                assertEquals(0, bank.nvm().stats().failovers(), where);
            }
            bank.nvm().crash(); // the frontend dies too (a no-op when it crashed at the tear)

            backend.close(); // then the backend is lost for good
            Files.delete(dir.resolve(pm));
            assertTrue(mirror.inSync(), "the mirror stayed in sync" + where);
            mirror.promote();
            Bank next = Bank.open(mirror.localFabric(), List.of(), options);
            next.nvm().recover();
            long[] balances = next.ledger().balances();
            assertNotNull(balances, "the accounts are gone" + where);
            assertEquals(PowerFailureRig.ACCOUNTS * PowerFailureRig.INITIAL, Arrays.stream(balances).sum(),
                    "a partial transfer is visible" + where);
            long[] withTorn = oracle.clone();
            if (torn != null) {
                torn.applyTo(withTorn);
            }
            if (!Arrays.equals(oracle, balances) && !Arrays.equals(withTorn, balances)) {
                fail("balances " + Arrays.toString(balances) + " are neither the acknowledged "
                        + Arrays.toString(oracle) + " nor them with the torn transfer " + Arrays.toString(withTorn)
                        + where);
            }
            if (!crashOnTear) {
                assertArrayEquals(oracle, balances, "every acknowledged transfer on the promoted mirror" + where);
            }
            boolean tornPresent = torn != null && !Arrays.equals(oracle, balances);
            next.accounts().transfer(0, 1, 5);
            new Transfer(0, 1, 5).applyTo(balances);
            assertArrayEquals(balances, next.ledger().balances(), "a transfer after the promotion" + where);
            System.out.printf("seed %d: %s, torn transfer %s%n", seed, toMirror.torn(),
                    torn == null ? "written again" : tornPresent ? "present" : "absent");
            next.nvm().close();
        } finally {
            backend.close();
        }
    }

    @Test
    void tornRecordOnTheMirrorThenFrontendCrashThenBackendLossKeepsEveryAcknowledgedTransfer() throws Exception {
        for (long seed = 1; seed <= SEEDS; seed++) {
            run(seed, true);
        }
    }

    @Test
    void tornRecordOnTheMirrorIsWrittenAgainAndSurvivesFrontendCrashAndBackendLoss() throws Exception {
        for (long seed = 101; seed < 101 + SEEDS; seed++) {
            run(seed, false);
        }
    }
}
