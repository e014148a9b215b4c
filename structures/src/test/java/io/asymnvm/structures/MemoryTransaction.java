package io.asymnvm.structures;

import io.asymnvm.frontend.Transaction;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

/** A {@link Transaction} over a byte array, recording every write, for unit tests of DRAM-side logic. */
final class MemoryTransaction implements Transaction {
    final byte[] memory;
    final List<long[]> writes = new ArrayList<>();

    MemoryTransaction(int size) {
        memory = new byte[size];
    }

    @Override
    public long readLong(long address) {
        return ByteBuffer.wrap(memory).order(ByteOrder.LITTLE_ENDIAN).getLong((int) address);
    }

    @Override
    public void writeLong(long address, long value) {
        write(address, ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(value).array());
    }

    @Override
    public int readInt(long address) {
        return ByteBuffer.wrap(memory).order(ByteOrder.LITTLE_ENDIAN).getInt((int) address);
    }

    @Override
    public void writeInt(long address, int value) {
        write(address, ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(value).array());
    }

    @Override
    public void read(long address, byte[] dst, int offset, int length) {
        System.arraycopy(memory, (int) address, dst, offset, length);
    }

    @Override
    public void write(long address, byte[] src, int offset, int length) {
        System.arraycopy(src, offset, memory, (int) address, length);
        writes.add(new long[] {address, length});
    }

    @Override
    public long allocate(long size) {
        throw new UnsupportedOperationException("allocate");
    }

    @Override
    public void free(long address) {
        throw new UnsupportedOperationException("free");
    }

    @Override
    public long root() {
        return 0;
    }

    @Override
    public void setRoot(long address) {
        throw new UnsupportedOperationException("setRoot");
    }
}
