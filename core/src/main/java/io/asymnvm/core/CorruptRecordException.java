package io.asymnvm.core;

/**
 * A record that fails its CRC or framing checks where a valid record must be (not at a log's torn
 * tail). Names the file or ring, the offset, and the expected and actual values.
 */
public final class CorruptRecordException extends AsymNvmException {
    private final String where;
    private final long offset;

    public CorruptRecordException(String where, long offset, String what, long expected, long actual) {
        super(ErrorCode.CORRUPT_RECORD, String.format(
                "corrupt record in %s at offset %d: %s expected 0x%x, actual 0x%x",
                where, offset, what, expected, actual));
        this.where = where;
        this.offset = offset;
    }

    public String where() {
        return where;
    }

    public long offset() {
        return offset;
    }
}
