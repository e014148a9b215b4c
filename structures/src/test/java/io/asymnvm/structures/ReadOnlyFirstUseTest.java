package io.asymnvm.structures;

import io.asymnvm.backend.BackendConfiguration;
import io.asymnvm.backend.BackendNode;
import io.asymnvm.frontend.AsymNvm;
import io.asymnvm.frontend.FrontendOptions;
import io.asymnvm.frontend.PersistentTransaction;
import io.asymnvm.frontend.Transaction;
import io.asymnvm.structures.codec.Codecs;
import io.asymnvm.testsupport.ShmTempDirFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A structure opened by name whose first use is a read-only method: the method creates it (the name resolves
 * inside the transaction), and the engine commits that creation as an ordinary logged transaction instead of
 * refusing the read-only method for writing; recovery re-executes it. A read-only method that writes anything
 * else is still refused.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ReadOnlyFirstUseTest {

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    /** Reads of a hash map opened by name. */
    public interface Reader {
        @PersistentTransaction(readOnly = true)
        String get(long key);

        @PersistentTransaction(readOnly = true)
        long size();

        @PersistentTransaction
        void put(long key, String value);

        /** Declared read-only, but writes beyond creating the structure. */
        @PersistentTransaction(readOnly = true)
        void sneakyWrite();
    }

    static final class ReaderImpl implements Reader {
        private final PersistentHashMap<Long, String> map;

        ReaderImpl(AsymNvm nvm) {
            this.map = PersistentHashMap.open(nvm, "first-read", Codecs.LONG, Codecs.STRING);
        }

        @Override
        public String get(long key) {
            return map.get(key);
        }

        @Override
        public long size() {
            return map.size();
        }

        @Override
        public void put(long key, String value) {
            map.put(key, value);
        }

        @Override
        public void sneakyWrite() {
            map.size();
            Transaction tx = Transaction.current();
            tx.setRoot(tx.root());
        }
    }

    @Test
    void shouldCreateOnAReadOnlyFirstUseAndRecoverTheCreation() {
        try (BackendNode node = BackendNode.start(BackendConfiguration.builder(dir.resolve("backend.pm"))
                .size(256L << 20).conclude())) {
            AsymNvm first = AsymNvm.open(node.localFabric(), 0,
                    FrontendOptions.builder().redoBatch(1 << 20, 1 << 20, 10_000_000).conclude());
            Reader reader = first.transactional(Reader.class, new ReaderImpl(first));
            long commits = first.stats().commits();
            assertNull(reader.get(7));
            assertEquals(commits + 1, first.stats().commits(), "the creating read was committed");
            assertEquals(0, reader.size());
            assertEquals(commits + 1, first.stats().commits(), "later reads commit nothing");
            IllegalStateException refused = assertThrows(IllegalStateException.class, reader::sneakyWrite);
            assertTrue(refused.getMessage().contains("wrote to persistent memory"), refused.getMessage());
            first.crash(); // the creation's redo was never shipped: recovery re-executes the read

            try (AsymNvm second = AsymNvm.open(node.localFabric(), 0, FrontendOptions.defaults())) {
                Reader again = second.transactional(Reader.class, new ReaderImpl(second));
                assertEquals(1, second.recover().transactions());
                again.put(7, "seven");
                assertEquals("seven", again.get(7));
                assertEquals(1, again.size());
            }
        }
    }
}
