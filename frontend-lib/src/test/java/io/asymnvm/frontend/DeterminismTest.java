package io.asymnvm.frontend;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;

import io.asymnvm.testsupport.ShmTempDirFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Determinism holes of issue 7 item 8: an attempt that changes its arguments and is abandoned (page miss) must
 * not leak the change into the attempt that commits, because recovery re-executes the logged bytes; and a
 * transactional proxy of another frontend called inside a transaction must be refused, not joined.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class DeterminismTest {
    /** Methods that change their arguments before reading (the read misses on a cold cache). */
    public interface Mutating {
        @PersistentTransaction
        long allocate();

        /** counter[0]++, then reads {@code address}, then stores counter[0] there. */
        @PersistentTransaction
        void bumpThenStore(long address, long[] counter);

        @PersistentTransaction(readOnly = true)
        long read(long address);

        /** Inside a transaction of this frontend, calls {@link Impl#other} (a proxy of another frontend). */
        @PersistentTransaction
        void callOther(long address, long otherAddress);

        /** Takes an argument the semantic log cannot carry (a proxy): refused before anything is logged. */
        @PersistentTransaction
        void store(long address, Runnable notLoggable);

        final class Impl implements Mutating {
            Mutating other;

            @Override
            public long allocate() {
                return Transaction.current().allocate(64);
            }

            @Override
            public void bumpThenStore(long address, long[] counter) {
                counter[0]++;
                Transaction tx = Transaction.current();
                tx.readLong(address); // misses in the first attempt: the attempt is abandoned and runs again
                tx.writeLong(address, counter[0]);
            }

            @Override
            public long read(long address) {
                return Transaction.current().readLong(address);
            }

            @Override
            public void store(long address, Runnable notLoggable) {
                Transaction.current().writeLong(address, 1);
            }

            @Override
            public void callOther(long address, long otherAddress) {
                Transaction.current().writeLong(address, 99);
                other.bumpThenStore(otherAddress, new long[] {41});
            }
        }
    }

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    @Test
    void shouldRunEveryAttemptOnFreshlyDecodedArguments() {
        long address;
        try (AsymNvm nvm = AsymNvm.embedded(dir)) {
            address = nvm.transactional(Mutating.class, new Mutating.Impl()).allocate();
        }
        long[] callerCounter = {10};
        try (AsymNvm nvm = AsymNvm.embedded(dir)) { // cold cache: the first attempt misses
            Mutating m = nvm.transactional(Mutating.class, new Mutating.Impl());
            long retriesBefore = nvm.stats().retries();
            m.bumpThenStore(address, callerCounter);
            assertTrue(nvm.stats().retries() > retriesBefore, "the call must have run more than once");
            assertEquals(11, m.read(address), "the committed attempt saw the logged arguments, not a mutated copy");
            assertEquals(10, callerCounter[0], "the caller's object is not the one the transaction runs on");
            nvm.crash(); // not applied yet (or applied): recovery re-executes the same logged bytes
        }
        try (AsymNvm nvm = AsymNvm.embedded(dir)) {
            Mutating m = nvm.transactional(Mutating.class, new Mutating.Impl());
            nvm.recover();
            assertEquals(11, m.read(address), "recovery reproduces what committed");
        }
    }

    @Test
    void shouldRefuseAProxyOfAnotherFrontendInsideATransaction() {
        try (TestBackend backend = TestBackend.start(dir, TestBackend.Transport.LOCAL);
             AsymNvm first = backend.open(1, FrontendOptions.defaults());
             AsymNvm second = backend.open(2, FrontendOptions.defaults())) {
            Mutating.Impl impl = new Mutating.Impl();
            Mutating a = first.transactional(Mutating.class, impl);
            Mutating b = second.transactional(Mutating.class, new Mutating.Impl());
            impl.other = b;
            long mine = a.allocate();
            long theirs = b.allocate();
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> a.callOther(mine, theirs));
            assertTrue(e.getMessage().contains("frontend 2") && e.getMessage().contains("frontend 1"),
                    e.getMessage());
            assertEquals(0, a.read(mine), "the outer transaction aborted: nothing written");
            assertEquals(0, b.read(theirs), "the other frontend wrote nothing");
        }
    }

    @Test
    void shouldRefuseArgumentsThatTheLogCannotReplay() {
        try (AsymNvm nvm = AsymNvm.embedded(dir)) {
            Mutating m = nvm.transactional(Mutating.class, new Mutating.Impl());
            long address = m.allocate();
            Runnable proxy = (Runnable) java.lang.reflect.Proxy.newProxyInstance(getClass().getClassLoader(),
                    new Class<?>[] {Runnable.class}, (p, method, args) -> null);
            AsymNvmException e = assertThrows(AsymNvmException.class, () -> m.store(address, proxy));
            assertEquals(ErrorCode.CLASS_NOT_REGISTERED, e.errorCode(), e.getMessage());
            assertTrue(e.getMessage().contains("store") && e.getMessage().contains(proxy.getClass().getName()),
                    e.getMessage());
            assertEquals(0, m.read(address), "refused before anything was logged or applied");
            nvm.crash();
            try (AsymNvm again = AsymNvm.embedded(dir)) {
                Mutating m2 = again.transactional(Mutating.class, new Mutating.Impl());
                again.recover(); // replays at most the allocation
                assertEquals(0, m2.read(address), "the refused call left no record to replay");
            }
        }
    }
}
