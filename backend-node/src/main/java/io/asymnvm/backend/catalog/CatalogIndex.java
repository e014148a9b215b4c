package io.asymnvm.backend.catalog;

import io.asymnvm.backend.slab.SlabTable;
import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.Checks;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.layout.ControlMessageLayout.CatalogEntry;
import io.asymnvm.core.layout.RootDirectoryLayout;
import io.asymnvm.core.layout.SlabHeaderLayout;
import io.asymnvm.core.layout.SuperblockLayout.Superblock;
import io.asymnvm.core.region.PersistentRegion;
import net.openhft.chronicle.map.ChronicleMap;
import net.openhft.chronicle.map.ChronicleMapBuilder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * The backend's catalog of named roots (DESIGN §6): name → owning frontend, type, codecs, root address, indexed
 * in a Chronicle Map persisted next to the PM image so a lookup needs no heap walk.
 *
 * <p>Chronicle Map does not promise durability, so the PM image stays the authority: each frontend's root
 * directory (a block in its heap, updated in the same transaction that creates a structure) is what the index is
 * checked against. After an unclean shutdown the index file is discarded and rebuilt from those directories; after
 * a clean one it is reopened and verified, and rebuilt on any difference. Either way the index is then complete
 * for the directories as they stand; it notes each frontend's directory state (first slab, address, entry count)
 * and walks a directory again only when that state changed, so a lookup of an absent name reads a few words per
 * frontend instead of every directory. The index is opened lazily, on the first
 * catalog call (opening Chronicle Map costs about two seconds of code generation), and needs the JVM flags listed
 * in the README; without them catalog calls fail with {@code CATALOG_UNAVAILABLE} and everything else works.
 */
public final class CatalogIndex implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(CatalogIndex.class);
    private static final int VALUE_LENGTH = 32;
    /**
     * Names the index holds at most, claims included, over all frontends: the Chronicle Map is sized for them
     * (with room for names of the longest length), and a new name beyond is refused with {@code QUOTA_EXCEEDED}
     * before anything is written, instead of Chronicle Map failing once its segments are full.
     */
    public static final int CAPACITY = 4_096;
    /** Names one frontend may hold by default ({@code --catalog-quota}): every default frontend can reach it. */
    public static final int DEFAULT_QUOTA = 256;
    /**
     * Entries the Chronicle Map is sized for: twice {@link #CAPACITY}, headroom for names longer than the average
     * key it is tuned for, and for a rebuild from root directories that hold more names than {@link #CAPACITY}
     * (created before this limit existed). {@link #CAPACITY} longest names are tested to fit.
     */
    private static final int MAP_ENTRIES = 2 * CAPACITY;

    private final Path file;
    private final boolean previousShutdownClean;
    private final PersistentRegion region;
    private final Superblock sb;
    private final SlabTable slabs;
    private ChronicleMap<String, byte[]> map;
    private final Map<String, List<Integer>> duplicates = new HashMap<>();
    private final Consumer<Runnable> betweenBatches;
    /** Per frontend, the directory state the index reflects; null: not walked yet, or not completely. */
    private final Seen[] seen;
    private final AtomicLong directoryWalks = new AtomicLong();
    private final int quota;
    /** Per frontend, the names (claims included) the index holds for it: counted at open, then kept up to date. */
    private final int[] held;

    /**
     * What identifies the content of a frontend's root directory: entries are only ever appended (the count grows)
     * and a directory that grows moves to a new block, so an unchanged triple means unchanged names.
     */
    private record Seen(int firstSlab, long directory, int count) {
    }

    /** {@code file} null: an in-memory index (regions without a file, e.g. simulated PM). */
    public CatalogIndex(Path file, boolean previousShutdownClean, PersistentRegion region, Superblock sb,
                        SlabTable slabs) {
        this(file, previousShutdownClean, region, sb, slabs, Runnable::run, DEFAULT_QUOTA);
    }

    /**
     * {@code betweenBatches} runs an action while no redo batch is being applied (the replayer's), so a directory
     * is never read half-updated; {@code quota}: names one frontend may hold, in [1, {@link #CAPACITY}].
     */
    public CatalogIndex(Path file, boolean previousShutdownClean, PersistentRegion region, Superblock sb,
                        SlabTable slabs, Consumer<Runnable> betweenBatches, int quota) {
        this.quota = (int) Checks.requireRange("catalog quota per frontend", quota, 1, CAPACITY);
        this.file = file;
        this.previousShutdownClean = previousShutdownClean;
        this.region = region;
        this.sb = sb;
        this.slabs = slabs;
        this.betweenBatches = betweenBatches;
        this.seen = new Seen[sb.maxFrontends()];
        this.held = new int[sb.maxFrontends()];
    }

    /**
     * The entry of {@code name}: a root, a claim (address 0: its owner is creating it), or null. A miss, or a
     * claim, first brings the index up to date with the PM root directories that changed since it last read them
     * (names created by transactions are indexed once applied, also when their owner's bind never arrived, e.g.
     * it crashed first). A directory is walked only if its first-slab, address or count changed: once the index is
     * complete (after opening, and after each catch-up), a name that is absent costs no directory walk.
     */
    public synchronized CatalogEntry lookup(String name) {
        ChronicleMap<String, byte[]> m = open();
        byte[] v = m.get(name);
        if (v != null) {
            CatalogEntry e = decode(name, v);
            if (e.entry().address() != 0) {
                return e;
            }
        }
        catchUp(m); // a miss, or a claim whose creating transaction may have been applied since
        v = m.get(name);
        return v == null ? null : decode(name, v);
    }

    /** Root directories walked so far (whole walks of one frontend's directory), for tools and tests. */
    public long directoryWalks() {
        return directoryWalks.get();
    }

    /** Walks the directories whose state differs from what the index reflects and indexes what they hold. */
    private void catchUp(ChronicleMap<String, byte[]> m) {
        betweenBatches.accept(() -> {
            for (int f = 0; f < seen.length; f++) {
                Seen now = stateOf(f);
                if (now.equals(seen[f])) {
                    continue;
                }
                Walk w = walk(f, now);
                for (RootDirectoryLayout.Entry e : w.entries()) {
                    index(m, new CatalogEntry(f, e));
                }
                seen[f] = w.complete() ? now : null;
            }
        });
    }

    /** Indexes a name found in a directory: new, or replacing its owner's claim; another owner's is a duplicate. */
    private void index(ChronicleMap<String, byte[]> m, CatalogEntry found) {
        String name = found.entry().name();
        byte[] v = m.get(name);
        if (v == null) {
            m.put(name, encode(found));
            held[found.owner()]++;
            return;
        }
        CatalogEntry current = decode(name, v);
        if (current.owner() == found.owner()) {
            if (current.entry().address() == 0) {
                m.put(name, encode(found));
            }
        } else if (current.entry().address() != 0) {
            duplicate(name, current, found);
        }
    }

    /**
     * Records a name for frontend {@code owner}, atomically (under this index's lock): either a <em>claim</em>
     * ({@code entry.address() == 0}), made before the transaction that creates the structure, or the created root,
     * which replaces the owner's claim. A name another frontend owns or has claimed is refused with
     * {@code NAME_TAKEN} before anything is created, so of several frontends creating one name at the same moment
     * exactly one proceeds. The PM root directories are consulted before a claim, so a name created inside a
     * transaction and applied, but not yet indexed, is found. A claim lives as long as this backend process: a
     * frontend that claimed a name and crashed before creating it keeps it (its next incarnation may create it); a
     * restart rebuilds the index from the directories, which drops claims whose creation never reached PM.
     */
    public synchronized void bind(int owner, RootDirectoryLayout.Entry entry) {
        ChronicleMap<String, byte[]> m = open();
        byte[] existing = m.get(entry.name());
        if (existing == null) {
            catchUp(m);
            existing = m.get(entry.name());
        }
        if (existing == null) {
            requireRoom(m, owner, entry.name());
        } else {
            CatalogEntry e = decode(entry.name(), existing);
            if (e.owner() != owner) {
                throw new AsymNvmException(ErrorCode.NAME_TAKEN, "root '" + entry.name() + "' "
                        + (e.entry().address() == 0 ? "is being created by " : "belongs to ") + describe(e)
                        + "; refused for frontend " + owner);
            }
            if (entry.address() == 0) {
                return; // the owner claims again (a retry, or its next incarnation): nothing changes
            }
            if (e.entry().address() != 0
                    && (e.entry().address() != entry.address() || e.entry().type() != entry.type())) {
                throw new AsymNvmException(ErrorCode.BAD_REQUEST, "root '" + entry.name() + "' is already bound to "
                        + describe(e) + "; refused " + describe(new CatalogEntry(owner, entry)));
            }
        }
        m.put(entry.name(), encode(new CatalogEntry(owner, entry)));
        if (existing == null) {
            held[owner]++;
        }
    }

    /**
     * Refuses a new name with {@code QUOTA_EXCEEDED} when {@code owner} already holds its quota of names, or the
     * index its {@link #CAPACITY} (claims count: a claim becomes a name).
     */
    private void requireRoom(ChronicleMap<String, byte[]> m, int owner, String name) {
        int total = m.size();
        if (total >= CAPACITY) {
            throw new AsymNvmException(ErrorCode.QUOTA_EXCEEDED, "root '" + name + "' refused for frontend " + owner
                    + ": the catalog holds " + total + " names, its capacity " + CAPACITY);
        }
        if (held[owner] >= quota) {
            throw new AsymNvmException(ErrorCode.QUOTA_EXCEEDED, "root '" + name + "' refused: frontend " + owner
                    + " holds " + held[owner] + " catalog names, quota " + quota + " (--catalog-quota)");
        }
    }

    private static String describe(CatalogEntry e) {
        return "frontend " + e.owner() + " (type " + e.entry().type() + ", address " + e.entry().address() + ")";
    }

    public synchronized int size() {
        return open().size();
    }

    private ChronicleMap<String, byte[]> open() {
        if (map != null) {
            return map;
        }
        try {
            ChronicleMapBuilder<String, byte[]> builder = ChronicleMapBuilder.of(String.class, byte[].class)
                    .name("asymnvm-catalog").averageKey("accounts-by-customer").averageValueSize(VALUE_LENGTH)
                    .entries(MAP_ENTRIES);
            Map<String, CatalogEntry> authority = scanDirectories();
            if (file == null) {
                map = builder.create();
                fill(authority);
                recount();
                return map;
            }
            boolean reuse = previousShutdownClean && Files.exists(file) && sealIntact();
            Files.deleteIfExists(seal());
            if (!reuse) {
                Files.deleteIfExists(file);
            }
            map = builder.createPersistedTo(file.toFile());
            if (!reuse || !matches(authority)) {
                LOG.info("rebuilding catalog {} from the PM root directories ({} names)", file, authority.size());
                map.clear();
                fill(authority);
            }
            recount();
            return map;
        } catch (IOException | RuntimeException | LinkageError e) {
            if (map != null) {
                map.close();
                map = null;
            }
            throw new AsymNvmException(ErrorCode.CATALOG_UNAVAILABLE, "catalog index unavailable (Chronicle Map "
                    + "needs the JVM flags listed in the README): " + e, e);
        }
    }

    private void recount() {
        java.util.Arrays.fill(held, 0);
        for (byte[] v : map.values()) {
            int owner = ByteBuffer.wrap(v).order(ByteOrder.LITTLE_ENDIAN).getInt(0);
            if (owner >= 0 && owner < held.length) {
                held[owner]++;
            }
        }
    }

    private void fill(Map<String, CatalogEntry> authority) {
        for (Map.Entry<String, CatalogEntry> e : authority.entrySet()) {
            map.put(e.getKey(), encode(e.getValue()));
        }
    }

    private boolean matches(Map<String, CatalogEntry> authority) {
        if (map.size() != authority.size()) {
            return false;
        }
        for (Map.Entry<String, CatalogEntry> e : authority.entrySet()) {
            byte[] v = map.get(e.getKey());
            if (v == null || !decode(e.getKey(), v).equals(e.getValue())) {
                return false;
            }
        }
        return true;
    }

    /**
     * A name found in two frontends' root directories: both were created (claims make that impossible while one
     * backend process serves, but a claim does not survive a backend crash that happens before the creation is
     * applied). Never dropped silently: reported by name, the index keeps the lower frontend id, and each frontend
     * still reaches its own structure through its own root directory.
     */
    private void duplicate(String name, CatalogEntry kept, CatalogEntry other) {
        synchronized (duplicates) {
            List<Integer> owners = duplicates.computeIfAbsent(name, n -> new ArrayList<>(List.of(kept.owner())));
            if (!owners.contains(other.owner())) {
                owners.add(other.owner());
                LOG.error("root '{}' exists in the root directories of frontends {}: the catalog resolves it to "
                        + "frontend {}; each frontend still reaches its own through its root directory", name,
                        owners, kept.owner());
            }
        }
    }

    /**
     * Names found in more than one frontend's root directory, with their owners (empty when names are unique).
     * Opens the index if it is not open yet, which reads every directory.
     */
    public Map<String, List<Integer>> duplicates() {
        synchronized (this) {
            open();
        }
        synchronized (duplicates) {
            Map<String, List<Integer>> out = new TreeMap<>();
            duplicates.forEach((n, o) -> out.put(n, List.copyOf(o)));
            return out;
        }
    }

    /**
     * Walks every frontend's root directory in the PM heap (the authority). Skips malformed directories. The index
     * is then known to reflect these directories (until they change).
     */
    public synchronized Map<String, CatalogEntry> scanDirectories() {
        Map<String, CatalogEntry> out = new HashMap<>();
        betweenBatches.accept(() -> {
            for (int f = 0; f < sb.maxFrontends(); f++) {
                Seen now = stateOf(f);
                Walk w = walk(f, now);
                for (RootDirectoryLayout.Entry e : w.entries()) {
                    CatalogEntry first = out.putIfAbsent(e.name(), new CatalogEntry(f, e));
                    if (first != null) {
                        duplicate(e.name(), first, new CatalogEntry(f, e));
                    }
                }
                seen[f] = w.complete() ? now : null;
            }
        });
        return out;
    }

    private record Walk(List<RootDirectoryLayout.Entry> entries, boolean complete) {
    }

    /** A frontend's first slab, directory address and entry count, read from PM (no entry is read). */
    private Seen stateOf(int f) {
        int first = slabs.firstSlabOf(f);
        if (first < 0) {
            return new Seen(-1, 0, 0);
        }
        long dir = region.getLong(sb.slabOffset(first) + SlabHeaderLayout.DIRECTORY_OFFSET);
        long heapSize = sb.slabCount() * sb.slabSize();
        boolean inHeap = dir > 0 && dir <= heapSize - RootDirectoryLayout.ENTRIES_OFFSET;
        return new Seen(first, dir, inHeap ? region.getInt(sb.heapOffset() + dir + RootDirectoryLayout.COUNT_OFFSET)
                : 0);
    }

    /** Reads every entry of frontend {@code f}'s directory; incomplete when something in it was unreadable. */
    private Walk walk(int f, Seen state) {
        long dir = state.directory();
        if (state.firstSlab() < 0 || dir == 0) {
            return new Walk(List.of(), true);
        }
        directoryWalks.incrementAndGet();
        long heapSize = sb.slabCount() * sb.slabSize();
        if (dir < 0 || dir > heapSize - RootDirectoryLayout.ENTRIES_OFFSET
                || region.getLong(sb.heapOffset() + dir) != RootDirectoryLayout.MAGIC) {
            LOG.warn("frontend {}: no root directory at heap address {}; its names are not indexed", f, dir);
            return new Walk(List.of(), false);
        }
        long at = sb.heapOffset() + dir;
        int count = region.getInt(at + RootDirectoryLayout.COUNT_OFFSET);
        int capacity = region.getInt(at + RootDirectoryLayout.CAPACITY_OFFSET);
        if (count < 0 || count > capacity || dir + RootDirectoryLayout.blockLength(capacity) > heapSize) {
            LOG.warn("frontend {}: root directory at {} has count {} / capacity {}; skipped", f, dir, count,
                    capacity);
            return new Walk(List.of(), false);
        }
        List<RootDirectoryLayout.Entry> entries = new ArrayList<>(count);
        boolean complete = true;
        for (int i = 0; i < count; i++) {
            try {
                entries.add(RootDirectoryLayout.decodeEntry(
                        region.read(at + RootDirectoryLayout.entryOffset(i), RootDirectoryLayout.ENTRY_LENGTH)));
            } catch (IllegalStateException bad) {
                LOG.warn("frontend {}: root directory entry {} unreadable: {}", f, i, bad.getMessage());
                complete = false;
            }
        }
        return new Walk(entries, complete);
    }

    private static byte[] encode(CatalogEntry e) {
        return ByteBuffer.allocate(VALUE_LENGTH).order(ByteOrder.LITTLE_ENDIAN).putInt(e.owner())
                .putInt(e.entry().type()).putInt(e.entry().keyCodec()).putInt(e.entry().valueCodec())
                .putLong(e.entry().address()).array();
    }

    private static CatalogEntry decode(String name, byte[] v) {
        ByteBuffer b = ByteBuffer.wrap(v).order(ByteOrder.LITTLE_ENDIAN);
        return new CatalogEntry(b.getInt(0), new RootDirectoryLayout.Entry(name, b.getInt(4), b.getInt(8),
                b.getInt(12), b.getLong(16)));
    }

    /** Names currently indexed (for tools and tests). */
    public synchronized List<String> names() {
        return open().keySet().stream().sorted().toList();
    }

    /** Sidecar written at a clean close: the index file's length and CRC32C. */
    private Path seal() {
        return file.resolveSibling(file.getFileName() + ".seal");
    }

    /** Whether the index file is exactly what the last clean close left (never hand Chronicle Map garbage). */
    private boolean sealIntact() throws IOException {
        Path seal = seal();
        if (!Files.exists(seal)) {
            return false;
        }
        String expected = Files.readString(seal).trim();
        return expected.equals(fingerprint());
    }

    private String fingerprint() throws IOException {
        java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
        byte[] bytes = Files.readAllBytes(file);
        crc.update(bytes, 0, bytes.length);
        // the sizing is part of the seal: a file sized otherwise (an older version's) is rebuilt, never reused
        return bytes.length + " " + Long.toHexString(crc.getValue()) + " entries=" + MAP_ENTRIES;
    }

    @Override
    public synchronized void close() {
        if (map != null) {
            map.close();
            map = null;
            if (file != null) {
                try {
                    Files.writeString(seal(), fingerprint() + "\n");
                } catch (IOException e) {
                    LOG.warn("cannot seal catalog {}: {}", file, e.toString());
                }
            }
        }
    }
}
