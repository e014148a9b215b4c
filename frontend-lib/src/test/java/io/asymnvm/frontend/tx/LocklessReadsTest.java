package io.asymnvm.frontend.tx;

import io.asymnvm.frontend.AsymNvm;
import io.asymnvm.frontend.PersistentTransaction;
import io.asymnvm.frontend.Transaction;
import io.asymnvm.testsupport.ShmTempDirFactory;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Read-only calls without the execution lock ({@link LocklessReads}): parallel readers never see part of a
 * transaction, a method that writes after having been read-only runs again under the lock and commits once, and a
 * reader that conflicts every time falls back to the lock and completes.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class LocklessReadsTest {
    /** 2048 accounts of 8 bytes: the balances span five 4 KiB pages, so a transfer often changes two pages. */
    private static final int ACCOUNTS = 2048;
    private static final long INITIAL = 1_000;

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    /** A bank of accounts: root block = count(8) | balances(8 x count). */
    public interface Bank {
        @PersistentTransaction
        void create(int accounts, long initial);

        @PersistentTransaction
        void transfer(int from, int to, long amount);

        /** The sum of every balance, declared read-only. */
        @PersistentTransaction(readOnly = true)
        long total();

        /** The same sum, not declared read-only: the engine learns that it writes nothing. */
        @PersistentTransaction
        long totalUndeclared();

        @PersistentTransaction(readOnly = true)
        long balance(int account);

        /** Adds 1 to account 1 if account 0 is not zero; returns account 1. Read-only while account 0 is zero. */
        @PersistentTransaction
        long bumpIfArmed();

        @PersistentTransaction
        void set(int account, long value);

        /** Reads account 0, and when running without the lock makes another thread commit a write in between. */
        @PersistentTransaction
        long readAroundAWrite();

        /** Reads account 0; without the lock, waits inside the body until another call is inside it too. */
        @PersistentTransaction(readOnly = true)
        long meetInside();

        /** Declared read-only but writes when account 0 is not zero: refused. */
        @PersistentTransaction(readOnly = true)
        long writeIfArmed();
    }

    /** An account on another page than account 0 (8 KiB further), for {@code readAroundAWrite}. */
    static final int FAR = 1024;

    static final class BankImpl implements Bank {
        volatile Bank self;
        final ExecutorService other = Executors.newSingleThreadExecutor();
        final CyclicBarrier inside = new CyclicBarrier(2);
        long written;

        private static long root() {
            long r = Transaction.current().root();
            if (r == 0) {
                throw new IllegalStateException("bank not created");
            }
            return r;
        }

        private static long at(int account) {
            return root() + 8 + 8L * account;
        }

        @Override
        public void create(int accounts, long initial) {
            Transaction tx = Transaction.current();
            long block = tx.allocate(8L + 8L * accounts);
            ByteBuffer b = ByteBuffer.allocate(8 + 8 * accounts).order(ByteOrder.LITTLE_ENDIAN);
            b.putLong(accounts);
            for (int i = 0; i < accounts; i++) {
                b.putLong(initial);
            }
            tx.write(block, b.array());
            tx.setRoot(block);
        }

        @Override
        public void transfer(int from, int to, long amount) {
            Transaction tx = Transaction.current();
            tx.writeLong(at(from), tx.readLong(at(from)) - amount);
            tx.writeLong(at(to), tx.readLong(at(to)) + amount);
        }

        @Override
        public long total() {
            Transaction tx = Transaction.current();
            long r = root();
            int n = (int) tx.readLong(r);
            ByteBuffer b = ByteBuffer.wrap(tx.read(r + 8, 8 * n)).order(ByteOrder.LITTLE_ENDIAN);
            long sum = 0;
            for (int i = 0; i < n; i++) {
                sum += b.getLong();
            }
            return sum;
        }

        @Override
        public long totalUndeclared() {
            return total();
        }

        @Override
        public long balance(int account) {
            return Transaction.current().readLong(at(account));
        }

        @Override
        public long bumpIfArmed() {
            Transaction tx = Transaction.current();
            long bumped = tx.readLong(at(1));
            if (tx.readLong(at(0)) != 0) {
                bumped++;
                tx.writeLong(at(1), bumped);
            }
            return bumped;
        }

        @Override
        public void set(int account, long value) {
            Transaction.current().writeLong(at(account), value);
        }

        @Override
        public long readAroundAWrite() {
            Transaction tx = Transaction.current();
            long first = tx.readLong(at(0));
            if (TransactionContext.current().lockless()) {
                long value = ++written;
                try {
                    CompletableFuture.runAsync(() -> self.set(FAR, value), other).get(30, TimeUnit.SECONDS);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }
            // the page of account FAR changed after the attempt started: a lockless attempt conflicts here (a page it
            // had read before the write would still give its snapshot, which is consistent, so it reads another)
            tx.readLong(at(FAR));
            return first + tx.readLong(at(0));
        }

        @Override
        public long meetInside() {
            long value = Transaction.current().readLong(at(0));
            if (TransactionContext.current().lockless()) {
                try {
                    inside.await(30, TimeUnit.SECONDS); // under one lock, the second call could never get here
                } catch (Exception e) {
                    throw new IllegalStateException("the other call never ran at the same time: " + e, e);
                }
            }
            return value;
        }

        @Override
        public long writeIfArmed() {
            Transaction tx = Transaction.current();
            if (tx.readLong(at(0)) != 0) {
                tx.writeLong(at(1), 7);
            }
            return tx.readLong(at(1));
        }
    }

    private static Bank bank(AsymNvm nvm, BankImpl impl) {
        Bank b = nvm.transactional(Bank.class, impl);
        impl.self = b;
        return b;
    }

    @Test
    void parallelReadersShouldNeverSeePartOfATransfer() throws Exception {
        readBesideTransfers(0x5EED_4EADL, 3, 1_500);
    }

    /** The long form (-Pslow): more seeds, 2 and 4 readers, ten times the reads. */
    @Tag("slow")
    @ParameterizedTest
    @CsvSource({"1, 2", "1, 4", "2, 2", "2, 4", "3, 4"})
    void parallelReadersShouldNeverSeePartOfATransferLong(long seed, int readers) throws Exception {
        readBesideTransfers(0x5EED_0000L + seed, readers, 20_000 / readers * 2);
    }

    /**
     * One writer moves money between random accounts while {@code readers} threads (half through the declared
     * read-only method, half through the learned one) each sum every balance {@code readsEach} times.
     */
    private void readBesideTransfers(long seed, int readers, int readsEach) throws Exception {
        BankImpl impl = new BankImpl();
        ExecutorService pool = Executors.newFixedThreadPool(readers + 1);
        try (AsymNvm nvm = AsymNvm.embedded(dir)) {
            Bank bank = bank(nvm, impl);
            bank.create(ACCOUNTS, INITIAL);
            long expected = ACCOUNTS * INITIAL;
            assertEquals(expected, bank.total()); // the first calls run under the lock and learn "read-only"
            assertEquals(expected, bank.totalUndeclared());
            EngineStats before = nvm.stats();
            AtomicBoolean done = new AtomicBoolean();
            Future<Integer> writer = pool.submit(() -> {
                Random random = new Random(seed);
                int transfers = 0;
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                while (!done.get() && transfers < 200_000 && System.nanoTime() < deadline) {
                    bank.transfer(random.nextInt(ACCOUNTS), random.nextInt(ACCOUNTS), 1 + random.nextInt(500));
                    transfers++;
                }
                return transfers;
            });
            List<Future<List<Long>>> results = new ArrayList<>();
            for (int t = 0; t < readers; t++) {
                boolean declared = t % 2 == 0;
                results.add(pool.submit(() -> {
                    List<Long> wrong = new ArrayList<>();
                    for (int i = 0; i < readsEach; i++) {
                        long total = declared ? bank.total() : bank.totalUndeclared();
                        if (total != expected) {
                            wrong.add(total);
                        }
                    }
                    return wrong;
                }));
            }
            List<Long> wrong = new ArrayList<>();
            for (Future<List<Long>> r : results) {
                wrong.addAll(r.get(90, TimeUnit.SECONDS));
            }
            done.set(true);
            int transfers = writer.get(90, TimeUnit.SECONDS);
            EngineStats after = nvm.stats();
            long attempts = after.locklessAttempts() - before.locklessAttempts();
            System.out.printf("seed %x: %d reads beside %d transfers; lockless attempts %d, conflicts %d, "
                            + "fallbacks %d%n", seed, readers * readsEach, transfers, attempts,
                    after.locklessConflicts() - before.locklessConflicts(),
                    after.locklessFallbacks() - before.locklessFallbacks());
            assertTrue(wrong.isEmpty(), "totals that saw part of a transfer (seed " + Long.toHexString(seed) + "): "
                    + wrong.subList(0, Math.min(10, wrong.size())));
            assertTrue(transfers > 0);
            assertTrue(attempts >= readers * readsEach - (after.locklessFallbacks() - before.locklessFallbacks()),
                    "reads ran without the lock: " + attempts + " attempts");
            assertEquals(readers * readsEach, after.readOnly() - before.readOnly());
            assertEquals(expected, bank.total());
        } finally {
            pool.shutdownNow();
            impl.other.shutdownNow();
        }
    }

    @Test
    void twoReadOnlyCallsShouldBeInsideTheirMethodBodiesAtTheSameTime() throws Exception {
        BankImpl impl = new BankImpl();
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try (AsymNvm nvm = AsymNvm.embedded(dir)) {
            Bank bank = bank(nvm, impl);
            bank.create(4, 0);
            bank.set(0, 5);
            assertEquals(5, bank.meetInside()); // the first call runs under the lock and waits for no one
            EngineStats before = nvm.stats();
            Future<Long> a = pool.submit(bank::meetInside);
            Future<Long> b = pool.submit(bank::meetInside);
            assertEquals(5, a.get(60, TimeUnit.SECONDS));
            assertEquals(5, b.get(60, TimeUnit.SECONDS));
            EngineStats after = nvm.stats();
            assertEquals(2, after.locklessAttempts() - before.locklessAttempts(), "both met inside, without the lock");
            assertEquals(0, after.locklessFallbacks() - before.locklessFallbacks());
        } finally {
            pool.shutdownNow();
            impl.other.shutdownNow();
        }
    }

    @Test
    void aMethodThatWritesAfterRunningReadOnlyShouldRunUnderTheLockAndCommitOnce() {
        BankImpl impl = new BankImpl();
        try (AsymNvm nvm = AsymNvm.embedded(dir)) {
            Bank bank = bank(nvm, impl);
            bank.create(4, 0);
            EngineStats s0 = nvm.stats();
            assertEquals(0, bank.bumpIfArmed());
            EngineStats s1 = nvm.stats();
            assertEquals(0, s1.locklessAttempts() - s0.locklessAttempts(), "the first call runs under the lock");
            assertEquals(0, s1.commits() - s0.commits());
            assertEquals(0, bank.bumpIfArmed());
            EngineStats s2 = nvm.stats();
            assertEquals(1, s2.locklessAttempts() - s1.locklessAttempts(), "read-only last time: no lock");
            bank.set(0, 1);
            EngineStats s3 = nvm.stats();
            assertEquals(1, bank.bumpIfArmed());
            EngineStats s4 = nvm.stats();
            assertEquals(1, s4.locklessAttempts() - s3.locklessAttempts());
            assertEquals(1, s4.locklessWrites() - s3.locklessWrites(), "abandoned before writing");
            assertEquals(1, s4.commits() - s3.commits(), "committed once");
            assertEquals(1, bank.balance(1));
            assertEquals(2, bank.bumpIfArmed());
            EngineStats s5 = nvm.stats();
            assertEquals(0, s5.locklessAttempts() - s4.locklessAttempts(), // balance's first call is locked too
                    "a method that wrote last time runs under the lock");
            nvm.crash();
        }
        try (AsymNvm nvm = AsymNvm.embedded(dir)) {
            Bank bank = bank(nvm, new BankImpl());
            assertEquals(2, bank.balance(1), "each call logged and re-executed exactly once");
        }
    }

    @Test
    void aReadOnlyMethodThatWritesShouldStillBeRefusedAfterRunningLockless() {
        try (AsymNvm nvm = AsymNvm.embedded(dir)) {
            Bank bank = bank(nvm, new BankImpl());
            bank.create(4, 0);
            assertEquals(0, bank.writeIfArmed());
            assertEquals(0, bank.writeIfArmed());
            bank.set(0, 1);
            EngineStats before = nvm.stats();
            IllegalStateException e = assertThrows(IllegalStateException.class, bank::writeIfArmed);
            assertTrue(e.getMessage().contains("wrote to persistent memory"), e.getMessage());
            EngineStats after = nvm.stats();
            assertEquals(1, after.locklessWrites() - before.locklessWrites());
            assertEquals(0, after.commits() - before.commits());
            assertEquals(0, bank.balance(1), "nothing of the refused call is visible");
        }
    }

    @Test
    void aReaderThatConflictsEveryTimeShouldFallBackToTheLockAndComplete() {
        BankImpl impl = new BankImpl();
        try (AsymNvm nvm = AsymNvm.embedded(dir)) {
            Bank bank = bank(nvm, impl);
            bank.create(FAR + 1, 0);
            bank.set(0, 21);
            assertEquals(42, bank.readAroundAWrite()); // first call: under the lock, no write in between
            EngineStats before = nvm.stats();
            assertEquals(42, bank.readAroundAWrite());
            EngineStats after = nvm.stats();
            assertEquals(LocklessReads.MAX_CONFLICTS, after.locklessAttempts() - before.locklessAttempts());
            assertEquals(LocklessReads.MAX_CONFLICTS, after.locklessConflicts() - before.locklessConflicts());
            assertEquals(1, after.locklessFallbacks() - before.locklessFallbacks());
            assertEquals(LocklessReads.MAX_CONFLICTS, after.commits() - before.commits(),
                    "one write committed in every lockless attempt");
            assertEquals(LocklessReads.MAX_CONFLICTS, bank.balance(FAR));
            assertFalse(TransactionContext.active());
        } finally {
            impl.other.shutdownNow();
        }
    }
}
