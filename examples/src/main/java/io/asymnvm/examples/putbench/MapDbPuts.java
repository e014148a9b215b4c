package io.asymnvm.examples.putbench;

import org.mapdb.DB;
import org.mapdb.DBMaker;
import org.mapdb.HTreeMap;
import org.mapdb.Serializer;

import java.nio.file.Path;

/**
 * The embedded store users compare against: MapDB 3.1 with a file DB and its write-ahead log
 * ({@code transactionEnable()}), an {@code HTreeMap<String, byte[]>}, and {@code commit()} after every put, so a
 * put returns durable as a SYNC transaction does. MapDB serialises commits: with several threads, a commit makes
 * durable whatever other threads put before it (that is how users run it).
 */
final class MapDbPuts implements PutTarget, AutoCloseable {
    private final DB db;
    private final HTreeMap<String, byte[]> map;

    MapDbPuts(Path file) {
        this.db = DBMaker.fileDB(file.toFile()).transactionEnable().make();
        this.map = db.hashMap("puts", Serializer.STRING, Serializer.BYTE_ARRAY).createOrOpen();
    }

    @Override
    public void put(String key, byte[] value) {
        map.put(key, value);
        db.commit();
    }

    /** The value of {@code key} as MapDB holds it (tests). */
    byte[] get(String key) {
        return map.get(key);
    }

    @Override
    public void close() {
        db.close();
    }
}
