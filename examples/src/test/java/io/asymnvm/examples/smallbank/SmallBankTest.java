package io.asymnvm.examples.smallbank;

import io.asymnvm.backend.BackendConfiguration;
import io.asymnvm.backend.BackendNode;
import io.asymnvm.examples.appbench.MixDriver;
import io.asymnvm.examples.appbench.MixPhase;
import io.asymnvm.examples.appbench.Outcome;
import io.asymnvm.frontend.AsymNvm;
import io.asymnvm.frontend.FrontendOptions;
import io.asymnvm.testsupport.ShmTempDirFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static io.asymnvm.examples.smallbank.SmallBankImpl.customerName;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * SmallBank on embedded frontends: each transaction's effect and aborts, then the money check (the total equals
 * the populated money plus what every committed call reported) after a multi-threaded run, and after a frontend
 * crash with its redo unapplied, the recovery that re-executes it, and a restart of the backend.
 */
@Timeout(90)
class SmallBankTest {
    private static final long SEED = 11;

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    private static SmallBank bank(AsymNvm nvm) {
        return nvm.transactional(SmallBank.class, new SmallBankImpl(nvm));
    }

    @Test
    void shouldRunEachTransactionAsTheBenchmarkDefinesIt() {
        try (AsymNvm nvm = AsymNvm.embedded(dir)) {
            SmallBank bank = bank(nvm);
            long money = SmallBankBench.populate(bank, 4, SEED);
            assertEquals(4, bank.customers());
            assertEquals(money, bank.total());
            String a = customerName(0);
            String b = customerName(1);
            String c = customerName(2);
            long sa = bank.savings(a);
            long ca = bank.checking(a);
            assertTrue(sa >= SmallBankImpl.MIN_BALANCE && sa <= SmallBankImpl.MAX_BALANCE, "savings " + sa);
            assertEquals(sa + ca, bank.balance(a));

            assertEquals(130, bank.depositChecking(a, 130));
            assertEquals(ca + 130, bank.checking(a));
            assertEquals(sa, bank.savings(a));

            long cb = bank.checking(b);
            assertEquals(0, bank.sendPayment(a, b, 500));
            assertEquals(ca + 130 - 500, bank.checking(a));
            assertEquals(cb + 500, bank.checking(b));
            long commits = nvm.stats().commits();
            assertThrows(SmallBankUserAbortException.class, () -> bank.sendPayment(a, b, ca + 1_000_000));
            assertEquals(cb + 500, bank.checking(b), "an aborted payment moves nothing");

            assertEquals(-2020, bank.transactSavings(a, 2020));
            assertEquals(sa - 2020, bank.savings(a));
            assertThrows(SmallBankUserAbortException.class, () -> bank.transactSavings(a, sa));
            assertEquals(sa - 2020, bank.savings(a), "savings never go negative");

            assertEquals(-500, bank.writeCheck(a, 500), "enough money: the amount");
            long total = bank.balance(c);
            long checkingC = bank.checking(c);
            assertEquals(-(total + 2), bank.writeCheck(c, total + 1), "too little: the amount and a penalty");
            assertEquals(checkingC - total - 2, bank.checking(c));

            long before = bank.balance(a) + bank.balance(b);
            assertEquals(0, bank.amalgamate(a, b));
            assertEquals(0, bank.savings(a));
            assertEquals(0, bank.checking(a));
            assertEquals(before, bank.checking(b) + bank.savings(b));
            assertThrows(SmallBankUserAbortException.class, () -> bank.amalgamate(b, b));
            assertThrows(SmallBankUserAbortException.class, () -> bank.balance("nobody"));
            assertThrows(IllegalArgumentException.class, () -> bank.depositChecking(a, -1));
            assertEquals(commits + 4, nvm.stats().commits(), "four commits; the aborts committed nothing");

            assertEquals(money + 130 - 2020 - 500 - (total + 2), bank.total());
        }
    }

    @Test
    void shouldConserveMoneyAfterAMultiThreadedRun() {
        try (AsymNvm nvm = AsymNvm.embedded(dir)) {
            SmallBank bank = bank(nvm);
            long money = SmallBankBench.populate(bank, 300, SEED);
            SmallBankMix mix = new SmallBankMix(bank, 300);
            MixPhase phase = new MixDriver(mix, 4).run(0.8, SEED);
            System.out.printf("smallbank 4 threads: %d transactions, %d user aborts, money added %d%n",
                    phase.transactions(), phase.total(Outcome.USER_ABORT), mix.moneyAdded());
            assertTrue(phase.transactions() > 0);
            for (int t = 0; t < SmallBankMix.TYPES.size(); t++) {
                assertTrue(phase.count(t) > 0, SmallBankMix.TYPES.get(t) + " ran");
            }
            assertEquals(money + mix.moneyAdded(), bank.total(), "seed " + SEED);
        }
    }

    @Test
    void shouldConserveMoneyAcrossAFrontendCrashRecoveryAndBackendRestart() {
        int customers = 200;
        long money;
        long added;
        long[] balances;
        Path pm = dir.resolve("backend.pm");
        BackendConfiguration config = BackendConfiguration.builder(pm).size(256L << 20).conclude();
        try (BackendNode node = BackendNode.start(config)) {
            AsymNvm first = AsymNvm.open(node.localFabric(), 0,
                    FrontendOptions.builder().redoBatch(1 << 20, 1 << 20, 10_000_000).conclude());
            SmallBank bank = bank(first);
            money = SmallBankBench.populate(bank, customers, SEED);
            SmallBankMix mix = new SmallBankMix(bank, customers);
            MixPhase phase = new MixDriver(mix, 3).run(0.5, SEED);
            assertTrue(phase.transactions() > 0);
            added = mix.moneyAdded();
            balances = balances(bank, customers);
            first.crash(); // committed (durable semantic records) but redo not shipped: recovery re-executes

            try (AsymNvm second = AsymNvm.open(node.localFabric(), 0, FrontendOptions.defaults())) {
                SmallBank again = bank(second);
                assertTrue(second.recover().transactions() > 0, "transactions re-executed");
                assertArrayEquals(balances, balances(again, customers), "every balance after recovery");
                assertEquals(money + added, again.total());
            }
        }
        try (BackendNode node = BackendNode.start(config);
             AsymNvm third = AsymNvm.open(node.localFabric(), 0, FrontendOptions.defaults())) {
            SmallBank bank = bank(third);
            assertArrayEquals(balances, balances(bank, customers), "every balance after the backend restarted");
            assertEquals(money + added, bank.total());
        }
    }

    private static long[] balances(SmallBank bank, int customers) {
        long[] b = new long[2 * customers];
        for (int i = 0; i < customers; i++) {
            b[2 * i] = bank.savings(customerName(i));
            b[2 * i + 1] = bank.checking(customerName(i));
        }
        return b;
    }
}
