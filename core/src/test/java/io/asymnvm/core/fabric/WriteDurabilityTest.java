package io.asymnvm.core.fabric;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Only bytes a WRITE stored and a later FLUSH persisted are durable; anything else is "not known". */
@Timeout(10)
class WriteDurabilityTest {
    private static void write(WriteDurability d, long at, long length) {
        d.storing(at, length);
        d.stored(at, length);
    }

    private static void flush(WriteDurability d, long at, long length) {
        long upTo = d.completed();
        d.flushed(at, length, upTo);
    }

    @Test
    void shouldKnowAFlushedWriteDurableAndNothingElse() {
        WriteDurability d = new WriteDurability();
        assertFalse(d.isDurable(0, 64), "nothing written: not known");
        write(d, 0, 128);
        assertFalse(d.isDurable(0, 128), "written, not flushed");
        flush(d, 0, 128);
        assertTrue(d.isDurable(0, 128));
        assertTrue(d.isDurable(64, 32), "a part of a flushed write");
        assertFalse(d.isDurable(64, 128), "past the flushed write");
    }

    @Test
    void shouldNeedEveryByteCoveredAndNoLaterWrite() {
        WriteDurability d = new WriteDurability();
        write(d, 0, 64);
        write(d, 128, 64);
        flush(d, 0, 192);
        assertFalse(d.isDurable(0, 192), "a hole at [64, 128)");
        write(d, 64, 64);
        assertFalse(d.isDurable(0, 192), "the hole is written, not flushed");
        flush(d, 64, 64);
        assertTrue(d.isDurable(0, 192));
        write(d, 32, 8); // a re-write of flushed bytes
        assertFalse(d.isDurable(0, 192), "re-written after the flush");
        assertTrue(d.isDurable(128, 64), "other bytes stay durable");
    }

    @Test
    void shouldNotTakeAStoreThatCompletedAfterThePersistStartedForDurable() {
        WriteDurability d = new WriteDurability();
        write(d, 0, 64);
        long upTo = d.completed(); // the FLUSH starts persisting here
        d.storing(64, 64);         // a store lands while it persists
        d.stored(64, 64);
        d.flushed(0, 128, upTo);
        assertTrue(d.isDurable(0, 64));
        assertFalse(d.isDurable(64, 64), "stored after the persist began");
        d.storing(0, 64);          // in progress: never durable until stored and flushed
        assertFalse(d.isDurable(0, 64));
    }

    @Test
    void shouldForgetReleasedRangesAndEverythingOnOverflow() {
        WriteDurability d = new WriteDurability();
        write(d, 0, 64);
        flush(d, 0, 64);
        d.release(0, 64);
        assertFalse(d.isDurable(0, 64), "released: not known any more");
        assertEquals(0, d.size());
        for (int i = 0; i < WriteDurability.MAX_WRITES; i++) {
            write(d, 64L * i, 64);
        }
        flush(d, 0, 64L * WriteDurability.MAX_WRITES);
        assertTrue(d.isDurable(0, 64));
        write(d, 1 << 30, 64); // one too many: the record is dropped
        assertEquals(1, d.overflows());
        assertFalse(d.isDurable(0, 64), "forgotten after the overflow: callers persist themselves");
    }

    /** The replayer persists a batch before the FLUSH that follows its WRITE: that FLUSH finds it durable. */
    @Test
    void shouldRememberWhatTheNodePersistedUntilAFlushCoveredIt() {
        WriteDurability d = new WriteDurability();
        write(d, 0, 128);
        long upTo = d.completed();
        d.persisted(0, 128, upTo); // the replayer, before the FLUSH
        d.release(0, 128);         // and applied the batch: it will not ask again
        assertTrue(d.isDurable(0, 128), "released by the node, not yet covered by a FLUSH: still known");
        assertEquals(1, d.size());
        flush(d, 0, 128);          // the FLUSH finds it durable (EmulatedNic skips its persist) and covers it
        assertEquals(0, d.size(), "released and flushed: forgotten");
        assertFalse(d.isDurable(0, 128));

        write(d, 256, 64);
        long before = d.completed();
        d.storing(320, 64);         // stored after the node's persist began
        d.stored(320, 64);
        d.persisted(256, 128, before);
        assertTrue(d.isDurable(256, 64));
        assertFalse(d.isDurable(256, 128), "the later store is not durable: the FLUSH must persist it");
        d.forget(256, 128);         // semantic records persisted after their FLUSH: no later FLUSH asks
        assertEquals(0, d.size());
        assertFalse(d.isDurable(256, 64));
    }
}
