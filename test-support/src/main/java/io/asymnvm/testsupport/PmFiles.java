package io.asymnvm.testsupport;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Offline reading and damaging of a PM file by tests (a node that uses it must be stopped): byte ranges, one
 * little-endian int (the image's byte order), and flipping one byte. Writes are forced to the file. I/O failures
 * are {@link UncheckedIOException}s naming the file.
 */
public final class PmFiles {
    /** What {@link #flipByte} XORs a byte with: every bit pattern changes, and no byte maps to itself. */
    public static final int FLIP_MASK = 0x5A;

    private PmFiles() {
    }

    /** {@code length} bytes at {@code offset}; zeros past the end of the file. */
    public static byte[] read(Path file, long offset, int length) {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            ByteBuffer b = ByteBuffer.allocate(length);
            while (b.hasRemaining() && ch.read(b, offset + b.position()) > 0) {
                // read fully
            }
            return b.array();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + length + " bytes at " + offset + " of " + file, e);
        }
    }

    /** Writes {@code bytes} at {@code offset} and forces them to the file. */
    public static void patch(Path file, long offset, byte[] bytes) {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
            ByteBuffer b = ByteBuffer.wrap(bytes);
            while (b.hasRemaining()) {
                ch.write(b, offset + b.position());
            }
            ch.force(true);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + bytes.length + " bytes at " + offset + " of " + file, e);
        }
    }

    public static void patchInt(Path file, long offset, int value) {
        patch(file, offset, ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(value).array());
    }

    public static int readInt(Path file, long offset) {
        return ByteBuffer.wrap(read(file, offset, 4)).order(ByteOrder.LITTLE_ENDIAN).getInt();
    }

    /** XORs the byte at {@code offset} with {@link #FLIP_MASK}; returns its original value. */
    public static byte flipByte(Path file, long offset) {
        byte[] b = read(file, offset, 1);
        byte original = b[0];
        b[0] ^= FLIP_MASK;
        patch(file, offset, b);
        return original;
    }
}
