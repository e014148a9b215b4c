package io.asymnvm.recovery.log;

import io.asymnvm.core.CorruptRecordException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.function.Consumer;

/**
 * Finds a ring's valid tail by walking records from its persistent head (Erda-style: CRC-checked records make a
 * torn tail visible). The walk stops at the first invalid record. If that record lies before the ring's
 * durable watermark (a position every record before which was acknowledged durable), it is corruption in the
 * middle of the log and raises {@link CorruptRecordException} naming ring, offset, expected and actual values;
 * otherwise it is a torn or unwritten tail and is truncated with a warning (when anything was there).
 */
public final class RingScanner {
    private static final Logger LOG = LoggerFactory.getLogger(RingScanner.class);

    private RingScanner() {
    }

    /** Result of a scan: the valid tail and how many valid records precede it. */
    public record Scan(long head, long tail, long records, byte[] lastRecord) {
    }

    public static Scan scan(RingReader reader, long head, long durableWatermark, Consumer<RingReader.Entry> visitor) {
        long pos = head;
        long records = 0;
        byte[] last = null;
        long limit = head + reader.capacity();
        while (pos < limit) {
            RingReader.Entry e = reader.read(pos);
            if (e.kind() == RingReader.Kind.INVALID) {
                if (pos < durableWatermark) {
                    throw new CorruptRecordException(reader.name(), reader.offsetOf(pos),
                            e.reason() + " (record before durable watermark " + durableWatermark + ")",
                            e.expected(), e.actual());
                }
                // The position is checked first: a mismatch means never-written space or bytes of an earlier lap
                // (possibly the middle of an old record), not a record torn at this position.
                // (Position 0 of a never-written ring matches a zero header; its zero length says "empty" too.)
                boolean empty = "record position".equals(e.reason())
                        || ("record length".equals(e.reason()) && e.actual() == 0);
                if (!empty) {
                    LOG.warn("{}: torn tail at position {} ({} expected 0x{} actual 0x{}), truncated",
                            reader.name(), pos, e.reason(), Long.toHexString(e.expected()),
                            Long.toHexString(e.actual()));
                }
                break;
            }
            if (e.kind() == RingReader.Kind.VALID) {
                records++;
                last = e.bytes();
                if (visitor != null) {
                    visitor.accept(e);
                }
            }
            pos = e.next();
        }
        return new Scan(head, pos, records, last);
    }
}
