package io.asymnvm.recovery.semantic;

import io.asymnvm.core.layout.LogRecordLayout;
import io.asymnvm.core.layout.SemanticRecordLayout;
import io.asymnvm.core.region.ByteArrayRegion;
import io.asymnvm.recovery.log.RingReader;

import java.util.ArrayList;
import java.util.List;

/**
 * Reads a frontend's semantic records after the backend's checkpoint, for frontend recovery (DESIGN §4): the
 * ring range {@code [head, tail)} is fetched (one-sided READs, through {@link Fetcher}) into a local copy, then
 * walked in order; the walk stops at the first record that is not valid (CRC, position, type), so a torn
 * record is treated as never written. Padding records are returned too, so that a recovering frontend can keep
 * copies of everything between head and tail.
 */
public final class SemanticLogReader {

    /** Reads {@code length} bytes at ring offset {@code offset} (never across the ring's end). */
    @FunctionalInterface
    public interface Fetcher {
        byte[] read(long offset, int length);
    }

    /** A record found after the head: its position, raw bytes (padded length) and tx id (0 for padding). */
    public record Record(long position, byte[] raw, long txId, long methodHash, byte[] arguments) {
        public boolean isPadding() {
            return txId == 0;
        }
    }

    private static final int CHUNK = 1 << 20;

    private SemanticLogReader() {
    }

    public static List<Record> read(Fetcher fetcher, long capacity, long head, long tail) {
        if (tail < head || tail - head > capacity) {
            throw new IllegalArgumentException("semantic range [" + head + ", " + tail + ") invalid for a ring of "
                    + capacity + " bytes");
        }
        ByteArrayRegion copy = new ByteArrayRegion("semantic ring copy", Math.toIntExact(capacity));
        long pos = head;
        while (pos < tail) {
            long inRing = Math.floorMod(pos, capacity);
            int n = (int) Math.min(Math.min(tail - pos, capacity - inRing), CHUNK);
            byte[] bytes = fetcher.read(inRing, n);
            copy.write(inRing, bytes, 0, n);
            pos += n;
        }
        RingReader reader = new RingReader(copy, 0, capacity, LogRecordLayout.TYPE_SEMANTIC, copy.name());
        List<Record> out = new ArrayList<>();
        pos = head;
        while (pos < tail) {
            RingReader.Entry e = reader.read(pos);
            if (e.kind() == RingReader.Kind.INVALID) {
                break;
            }
            int span = (int) (e.next() - pos);
            byte[] raw = copy.read(Math.floorMod(pos, capacity), e.kind() == RingReader.Kind.PADDING
                    ? LogRecordLayout.ALIGNMENT : span);
            if (e.kind() == RingReader.Kind.PADDING) {
                out.add(new Record(pos, raw, 0, 0, null));
            } else {
                out.add(new Record(pos, raw, SemanticRecordLayout.txId(e.bytes()),
                        SemanticRecordLayout.methodHash(e.bytes()), SemanticRecordLayout.arguments(e.bytes())));
            }
            pos = e.next();
        }
        return out;
    }
}
