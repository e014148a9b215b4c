package io.asymnvm.core;

/**
 * A record that fails its CRC or framing checks where a valid record must be (not at a log's torn
 * tail). Names the file or ring, the offset, and the expected and actual values.
 */
public final class CorruptRecordException extends AsymNvmException {
    private final String where;
    private final long offset;
    private final String what;
    private final long expected;
    private final long actual;

    public CorruptRecordException(String where, long offset, String what, long expected, long actual) {
        super(ErrorCode.CORRUPT_RECORD, String.format(
                "corrupt record in %s at offset %d: %s expected 0x%x, actual 0x%x",
                where, offset, what, expected, actual));
        this.where = where;
        this.offset = offset;
        this.what = what;
        this.expected = expected;
        this.actual = actual;
    }

    public String where() {
        return where;
    }

    public long offset() {
        return offset;
    }

    /** What did not match (a field name, with context). */
    public String what() {
        return what;
    }

    public long expected() {
        return expected;
    }

    public long actual() {
        return actual;
    }
}
