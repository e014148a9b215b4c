package io.asymnvm.frontend;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;

/**
 * A clean page in a frontend's cache differs from the backend's image of the same page: the frontend would have
 * computed on bytes the backend does not hold. Raised only in coherence check mode
 * ({@link FrontendOptions.Builder#verifyCache(boolean)}); it always means a bug in this library (or memory
 * changed behind the frontend's back), never a caller error. The frontend stops: every later call fails with it.
 */
public final class CacheIncoherentException extends AsymNvmException {
    private final int frontendId;
    private final long pageIndex;
    private final long pageAddress;
    private final long lastWriterTxId;
    private final long appliedTxId;
    private final int offset;

    public CacheIncoherentException(int frontendId, long pageIndex, long pageAddress, long lastWriterTxId,
                                    long appliedTxId, int offset, byte cached, byte backend, String when) {
        super(ErrorCode.CACHE_INCOHERENT, "frontend " + frontendId + ": cached page " + pageIndex + " (heap "
                + pageAddress + ") differs from the backend image at page offset " + offset + " (heap "
                + (pageAddress + offset) + "): cached 0x" + hex(cached) + ", backend 0x" + hex(backend)
                + "; page last written by tx " + lastWriterTxId + ", backend applied tx " + appliedTxId
                + " (found " + when + ")");
        this.frontendId = frontendId;
        this.pageIndex = pageIndex;
        this.pageAddress = pageAddress;
        this.lastWriterTxId = lastWriterTxId;
        this.appliedTxId = appliedTxId;
        this.offset = offset;
    }

    private static String hex(byte b) {
        return String.format("%02x", b & 0xff);
    }

    public int frontendId() {
        return frontendId;
    }

    public long pageIndex() {
        return pageIndex;
    }

    public long pageAddress() {
        return pageAddress;
    }

    /** The transaction that last wrote the page on this frontend (0 if it was fetched and never written). */
    public long lastWriterTxId() {
        return lastWriterTxId;
    }

    /** The backend's applied transaction id as this frontend knew it when the mismatch was found. */
    public long appliedTxId() {
        return appliedTxId;
    }

    /** First differing byte offset within the page. */
    public int offset() {
        return offset;
    }
}
