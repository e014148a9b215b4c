package io.asymnvm.frontend.log;

import io.asymnvm.core.layout.LogRecordLayout;
import io.asymnvm.frontend.link.RingWriter;

import java.util.ArrayDeque;
import java.util.function.LongFunction;

/**
 * Appends records to one of this frontend's rings on the backend with one-sided WRITEs, and keeps a copy of every
 * record the backend has not yet applied, so that after a reconnect (backend restart) they can be written again
 * at the same positions. A record never wraps: a padding record fills the rest of the ring first.
 *
 * <p>Positions are logical and monotonic; the ring offset is {@code position % capacity}. The writer may run
 * ahead of the backend's head by at most the capacity. Used under the frontend's execution lock.
 */
public final class RingAppender {
    private record Retained(long position, byte[] bytes, long lastTxId) {
    }

    private final int regionId;
    private final long capacity;
    private final ArrayDeque<Retained> retained = new ArrayDeque<>();
    private long position;
    private long head;

    public RingAppender(int regionId, long capacity, long position, long head) {
        this.regionId = regionId;
        this.capacity = capacity;
        this.position = position;
        this.head = head;
    }

    public long position() {
        return position;
    }

    /** Where the oldest retained record starts; {@link #position()} when nothing is retained. */
    public long firstRetained() {
        Retained r = retained.peekFirst();
        return r == null ? position : r.position();
    }

    public long capacity() {
        return capacity;
    }

    /** Bytes an append of {@code alignedLength} needs now, including padding to the end of the ring. */
    private long needed(int alignedLength) {
        long inRing = Math.floorMod(position, capacity);
        return inRing + alignedLength > capacity ? capacity - inRing + alignedLength : alignedLength;
    }

    public boolean fits(int alignedLength) {
        return position + needed(alignedLength) - head <= capacity;
    }

    /**
     * Posts a record built for its final position (after any padding). The caller checked {@link #fits}.
     * Returns the position just past the record.
     */
    public long append(RingWriter link, int alignedLength, LongFunction<byte[]> recordAt, long lastTxId) {
        long inRing = Math.floorMod(position, capacity);
        if (inRing + alignedLength > capacity) {
            int span = (int) (capacity - inRing);
            byte[] pad = LogRecordLayout.padding(position, span);
            link.write(regionId, inRing, pad, pad.length);
            retained.add(new Retained(position, pad, lastTxId));
            position += span;
            inRing = 0;
        }
        byte[] record = recordAt.apply(position);
        link.write(regionId, inRing, record, record.length);
        retained.add(new Retained(position, record, lastTxId));
        position += record.length;
        return position;
    }

    /**
     * Takes over a record that is already in the ring (found during recovery): it is written again at its
     * position through this session and retained like an appended one, and the write position moves past it.
     *
     * <p>The rewrite is what makes it durable. The incarnation that posted it may have died before its FLUSH, and
     * a FLUSH persists only what its own session wrote; without the rewrite, this session's next FLUSH would stamp
     * the durable watermark past bytes that are visible on the backend but were never persisted, and a power
     * failure would leave a ring that is invalid before its watermark (issue 7, item 7).
     */
    public void adopt(RingWriter link, long recordPosition, byte[] raw, long lastTxId, long next) {
        if (recordPosition != position) {
            throw new IllegalStateException("adopting a record at " + recordPosition + " but the ring tail is at "
                    + position);
        }
        link.write(regionId, Math.floorMod(recordPosition, capacity), raw, raw.length);
        retained.add(new Retained(recordPosition, raw, lastTxId));
        position = next;
    }

    /** The backend applied everything up to {@code appliedTxId} and reclaimed up to {@code newHead}. */
    public void release(long appliedTxId, long newHead) {
        while (!retained.isEmpty() && retained.peekFirst().lastTxId() <= appliedTxId) {
            retained.pollFirst();
        }
        head = Math.max(head, newHead);
    }

    /** Writes every retained record again, in order, at its original position. */
    public int repost(RingWriter link) {
        for (Retained r : retained) {
            link.write(regionId, Math.floorMod(r.position(), capacity), r.bytes(), r.bytes().length);
        }
        return retained.size();
    }

    public int retainedRecords() {
        return retained.size();
    }
}
