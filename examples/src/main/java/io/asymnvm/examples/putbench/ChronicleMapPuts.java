package io.asymnvm.examples.putbench;

import net.openhft.chronicle.map.ChronicleMap;
import net.openhft.chronicle.map.ChronicleMapBuilder;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Chronicle Map (the off-heap map the backend's catalog uses) persisted to a file, as a put target: either with
 * no sync at all (what Chronicle Map itself offers: its authors promise no durability), or with the file's dirty
 * pages written back after every put ({@code FileChannel.force(false)}, i.e. fdatasync: on Linux it writes back
 * the pages dirtied through the map's shared mapping, as an msync of the mapping would).
 */
final class ChronicleMapPuts implements PutTarget, AutoCloseable {
    private final ChronicleMap<String, byte[]> map;
    private final FileChannel sync;

    ChronicleMapPuts(Path file, int keys, int valueSize, boolean syncEveryPut) {
        try {
            this.map = ChronicleMapBuilder.of(String.class, byte[].class).name("bench-report-puts")
                    .averageKey(PutsBenchConfig.key(Math.max(0, keys - 1))).averageValueSize(valueSize)
                    .entries(Math.max(1000, keys * 2L)).createPersistedTo(file.toFile());
            this.sync = syncEveryPut ? FileChannel.open(file, StandardOpenOption.WRITE) : null;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create the Chronicle Map file " + file, e);
        }
    }

    @Override
    public void put(String key, byte[] value) {
        map.put(key, value);
        if (sync != null) {
            try {
                sync.force(false);
            } catch (IOException e) {
                throw new UncheckedIOException("sync of the Chronicle Map file failed", e);
            }
        }
    }

    /** The value of {@code key} as the map holds it (tests). */
    byte[] get(String key) {
        return map.get(key);
    }

    @Override
    public void close() {
        try {
            if (sync != null) {
                sync.close();
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot close the Chronicle Map file", e);
        } finally {
            map.close();
        }
    }
}
