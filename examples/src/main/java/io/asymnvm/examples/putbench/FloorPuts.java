package io.asymnvm.examples.putbench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The raw floor under a durable put: append a record of the put's size (key and value bytes) to a memory-mapped
 * file and force it ({@code MappedByteBuffer.force(index, length)}), which is exactly what the backend's
 * {@code MappedRegion.persist} does on a mapping of a file in the same directory. Threads claim disjoint slots
 * with one atomic cursor; the file is a ring of {@value #FILE_BYTES} bytes (slots aligned to 64 bytes, a cache
 * line), so the floor never grows a file.
 */
final class FloorPuts implements PutTarget {
    static final int FILE_BYTES = (int) PutsBenchConfig.FLOOR_FILE_BYTES;
    static final int MAX_RECORD_BYTES = FILE_BYTES / 16;
    private static final int ALIGN = 64;

    private final MappedByteBuffer map;
    private final int slot;
    private final int slots;
    private final AtomicLong cursor = new AtomicLong();

    FloorPuts(Path file, int recordBytes) {
        if (recordBytes < 1 || recordBytes > MAX_RECORD_BYTES) {
            throw new IllegalArgumentException("floor record size outside [1, " + MAX_RECORD_BYTES + "]: "
                    + recordBytes);
        }
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
                StandardOpenOption.WRITE)) {
            this.map = ch.map(FileChannel.MapMode.READ_WRITE, 0, FILE_BYTES);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot map the floor's file " + file, e);
        }
        this.slot = (recordBytes + ALIGN - 1) / ALIGN * ALIGN;
        this.slots = FILE_BYTES / slot;
    }

    @Override
    public void put(String key, byte[] value) {
        int at = (int) (cursor.getAndIncrement() % slots) * slot;
        int keyBytes = Math.min(key.length(), slot);
        for (int i = 0; i < keyBytes; i++) {
            map.put(at + i, (byte) key.charAt(i));
        }
        int n = Math.min(value.length, slot - keyBytes);
        map.put(at + keyBytes, value, 0, n);
        map.force(at, keyBytes + n);
    }
}
