package io.asymnvm.examples.bank;

import io.asymnvm.frontend.AsymNvm;
import io.asymnvm.testsupport.ShmTempDirFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(30)
class BankTest {
    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    private static Bank bank(AsymNvm nvm) {
        return nvm.transactional(Bank.class, new BankImpl());
    }

    @Test
    void shouldMoveMoneyAndKeepTheTotal() {
        try (AsymNvm nvm = AsymNvm.embedded(dir)) {
            Bank bank = bank(nvm);
            assertEquals(0, bank.accounts());
            bank.open(4, 100);
            bank.transfer(0, 1, 30);
            bank.transfer(1, 3, 130);
            assertEquals(4, bank.accounts());
            assertEquals(70, bank.balance(0));
            assertEquals(0, bank.balance(1));
            assertEquals(100, bank.balance(2));
            assertEquals(230, bank.balance(3));
            assertEquals(400, bank.total());
        }
    }

    @Test
    void shouldAbortInsufficientTransferWithoutChangingAnything() {
        try (AsymNvm nvm = AsymNvm.embedded(dir)) {
            Bank bank = bank(nvm);
            bank.open(3, 100);
            long commits = nvm.stats().commits();
            long aborts = nvm.stats().aborts();
            InsufficientFundsException e = assertThrows(InsufficientFundsException.class,
                    () -> bank.transfer(2, 0, 101));
            assertEquals(2, e.account());
            assertEquals(100, e.balance());
            assertEquals(101, e.amount());
            assertEquals(commits, nvm.stats().commits());
            assertEquals(aborts + 1, nvm.stats().aborts());
            assertEquals(100, bank.balance(0));
            assertEquals(100, bank.balance(2));
            assertEquals(300, bank.total());
            bank.transfer(2, 0, 100);
            assertEquals(0, bank.balance(2));
            assertEquals(200, bank.balance(0));
        }
    }

    @Test
    void shouldNameTheBadIndexAndTheAccountCount() {
        try (AsymNvm nvm = AsymNvm.embedded(dir)) {
            Bank bank = bank(nvm);
            bank.open(5, 10);
            IllegalArgumentException to = assertThrows(IllegalArgumentException.class, () -> bank.transfer(0, 7, 1));
            assertTrue(to.getMessage().contains("7") && to.getMessage().contains("5 accounts"), to.getMessage());
            IllegalArgumentException from = assertThrows(IllegalArgumentException.class,
                    () -> bank.transfer(-1, 0, 1));
            assertTrue(from.getMessage().contains("-1") && from.getMessage().contains("5 accounts"),
                    from.getMessage());
            IllegalArgumentException read = assertThrows(IllegalArgumentException.class, () -> bank.balance(5));
            assertTrue(read.getMessage().contains("index 5"), read.getMessage());
            assertThrows(IllegalArgumentException.class, () -> bank.transfer(0, 1, -3));
            assertEquals(50, bank.total());
        }
    }

    @Test
    void shouldReopenIdempotentlyAndRefuseADifferentSize() {
        try (AsymNvm nvm = AsymNvm.embedded(dir)) {
            Bank bank = bank(nvm);
            assertThrows(IllegalStateException.class, () -> bank.transfer(0, 1, 1));
            bank.open(4, 100);
            bank.transfer(0, 1, 40);
            bank.open(4, 999);
            assertEquals(60, bank.balance(0));
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> bank.open(8, 100));
            assertTrue(e.getMessage().contains("4 accounts"), e.getMessage());
            assertThrows(IllegalArgumentException.class, () -> bank.open(0, 100));
        }
    }

    @Test
    void shouldKeepEveryBalanceAcrossReopen() {
        long seed = new Random().nextLong();
        Random random = new Random(seed);
        int accounts = 32;
        long[] oracle = new long[accounts];
        Arrays.fill(oracle, 500);
        try (AsymNvm nvm = AsymNvm.embedded(dir)) {
            Bank bank = bank(nvm);
            bank.open(accounts, 500);
            for (int t = 0; t < 2_000; t++) {
                int from = random.nextInt(accounts);
                int to = random.nextInt(accounts);
                long amount = random.nextInt(300);
                try {
                    bank.transfer(from, to, amount);
                    oracle[from] -= amount;
                    oracle[to] += amount;
                } catch (InsufficientFundsException e) {
                    assertTrue(oracle[from] < amount, "seed " + seed + ": unexpected abort " + e.getMessage());
                }
            }
        }
        try (AsymNvm nvm = AsymNvm.embedded(dir)) {
            Bank bank = bank(nvm);
            long[] actual = new long[accounts];
            for (int i = 0; i < accounts; i++) {
                actual[i] = bank.balance(i);
            }
            assertArrayEquals(oracle, actual, "seed " + seed);
            assertEquals(500L * accounts, bank.total(), "seed " + seed);
        }
    }
}
