package io.asymnvm.recovery.log;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.CorruptRecordException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.layout.LogRecordLayout;

/**
 * A damaged record inside a ring (not a torn tail): which ring, the offset in the backing file or region, the
 * ring position, and what did not match. It quarantines the ring's frontend (issue 10, item 2): the backend keeps
 * serving every other frontend, and the damaged ring is never truncated or rewritten automatically.
 *
 * <p>Two ways to know a record is damaged rather than torn:
 * <ul>
 *   <li>it lies before a durable watermark (the semantic ring): {@link RingScanner} raises a
 *       {@link CorruptRecordException}, turned into a damage by {@link #of};</li>
 *   <li>it has no watermark (the redo ring), but the record its header announces is followed by a valid record
 *       ({@link #ofUnwatermarked}): a frontend writes its ring in order over one connection, and a rewrite writes
 *       the same bytes, so a record whose successor is complete was itself complete, and its check fails for
 *       good.</li>
 * </ul>
 */
public record RingDamage(String ring, long offset, long position, String what, long expected, long actual) {

    /** The damage a scan reported (its ring position is not known: -1). */
    public static RingDamage of(CorruptRecordException e) {
        return new RingDamage(e.where(), e.offset(), -1, e.what(), e.expected(), e.actual());
    }

    /**
     * The damage at {@code invalid} (an {@link RingReader.Kind#INVALID} entry of {@code reader}) if a valid record
     * or padding follows the record its header announces; null if it may still be a torn or unwritten tail.
     */
    public static RingDamage ofUnwatermarked(RingReader reader, RingReader.Entry invalid) {
        if (invalid.kind() != RingReader.Kind.INVALID || "record position".equals(invalid.reason())
                || "record length".equals(invalid.reason())) {
            return null; // never written here, or a length that announces nothing to look behind
        }
        int length = reader.storedLength(invalid.position());
        long inRing = Math.floorMod(invalid.position(), reader.capacity());
        if (length < LogRecordLayout.COMMON_HEADER_LENGTH || length > reader.capacity() - inRing) {
            return null;
        }
        RingReader.Entry next = reader.read(invalid.position() + LogRecordLayout.alignedLength(length));
        if (next.kind() == RingReader.Kind.INVALID) {
            return null;
        }
        // the successor is complete, so this record was written completely before it: read it again, final now
        RingReader.Entry again = reader.read(invalid.position());
        if (again.kind() != RingReader.Kind.INVALID) {
            return null;
        }
        return new RingDamage(reader.name(), reader.offsetOf(invalid.position()), invalid.position(),
                again.reason() + " (a valid record follows at position " + next.position() + ")", again.expected(),
                again.actual());
    }

    /** "ring R, offset O (position P): what expected 0x.., actual 0x.." (no position when unknown). */
    public String describe() {
        return String.format("%s, offset %d%s: %s expected 0x%x, actual 0x%x", ring, offset,
                position < 0 ? "" : " (position " + position + ")", what, expected, actual);
    }

    /** The typed refusal for frontend {@code frontendId}, naming ring, offset, expected and actual values. */
    public AsymNvmException refusal(int frontendId) {
        return new AsymNvmException(ErrorCode.RING_CORRUPT, "frontend " + frontendId + " is quarantined: damaged "
                + "record in " + describe() + "; the ring is kept as it is (nothing truncated or rewritten), every "
                + "other frontend is served; inspect the image with `asymnvm inspect --pm FILE`");
    }
}
