package io.asymnvm.structures;

import io.asymnvm.core.inspect.HeapInspector;
import io.asymnvm.frontend.Transaction;

import java.util.ArrayList;
import java.util.List;

/**
 * A read-only {@link Transaction} over a PM image's heap, read through an inspector's reader, for running the
 * structures' own verifiers offline. Records every range read, so the inspection can check that each lies in an
 * allocated block of the right frontend. Any write is refused.
 */
final class ImageTransaction implements Transaction {
    private final HeapInspector.Reader reader;
    private final long heapOffset;
    private final long heapSize;
    /** Every range read, as {address, length}. */
    final List<long[]> reads = new ArrayList<>();

    ImageTransaction(HeapInspector.Reader reader, long heapOffset, long heapSize) {
        this.reader = reader;
        this.heapOffset = heapOffset;
        this.heapSize = heapSize;
    }

    @Override
    public void read(long address, byte[] dst, int offset, int length) {
        if (address < 0 || length < 0 || address > heapSize - length) {
            throw new IllegalArgumentException("heap range [" + address + ", " + (address + length)
                    + ") outside the heap of " + heapSize + " bytes");
        }
        System.arraycopy(reader.read(heapOffset + address, length), 0, dst, offset, length);
        reads.add(new long[] {address, length});
    }

    private static UnsupportedOperationException readOnly() {
        return new UnsupportedOperationException("an inspection is read-only");
    }

    @Override
    public void write(long address, byte[] src, int offset, int length) {
        throw readOnly();
    }

    @Override
    public long allocate(long size) {
        throw readOnly();
    }

    @Override
    public void free(long address) {
        throw readOnly();
    }

    @Override
    public long root() {
        throw readOnly();
    }

    @Override
    public void setRoot(long address) {
        throw readOnly();
    }
}
