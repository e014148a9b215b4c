package io.asymnvm.structures;

import io.asymnvm.core.inspect.HeapInspector;
import io.asymnvm.core.layout.RootDirectoryLayout;
import io.asymnvm.core.layout.SlabHeaderLayout;
import io.asymnvm.core.layout.SuperblockLayout.Superblock;
import io.asymnvm.structures.codec.Codecs;
import io.asymnvm.structures.codec.ValueCodec;
import io.asymnvm.structures.layout.StructureHeaderLayout;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * {@code inspect --deep}: the offline walk of every frontend's heap (found through {@link java.util.ServiceLoader}).
 *
 * <p>Per owned slab, the block allocator: header magic, bump offset, every free list (each entry a block of the
 * slab with a cleared header, no cycle), then every block from the header to the bump offset parsed in order, so
 * that each free-list entry lies on a block boundary and no two blocks overlap. Per frontend, its root directory
 * (magic, count within capacity, entries that decode) and every named structure in it: header magic, type and
 * codec ids equal to the directory's, then the structure's own verifier (the checks {@code verify()} runs)
 * over a read-only transaction on the image. Every range a structure's walk read must lie inside one allocated
 * block of that frontend's slabs, and no block may belong to two structures. Names in two frontends'
 * directories are reported. Allocated blocks no structure references are counted as a warning (raw
 * {@code Transaction.allocate} users own such blocks; for a frontend that only uses structures they are leaks).
 */
public final class DeepInspector implements HeapInspector {
    /** An allocated block: payload {@code [start, end)} in a slab of {@code frontend}. */
    private record Allocated(long start, long end, int frontend) {
    }

    private final List<String> problems = new ArrayList<>();
    private final List<String> warnings = new ArrayList<>();
    private final List<String> lines = new ArrayList<>();
    private final TreeMap<Long, Allocated> blocks = new TreeMap<>();
    private final Map<Long, String> owners = new HashMap<>();
    private long structures;
    private long entries;
    private long freeBlocks;

    @Override
    public Findings inspect(Superblock sb, int[] slabOwners, Reader reader) {
        DeepInspector walk = new DeepInspector(); // one walk per call: this instance may be a shared service
        return walk.run(sb, slabOwners, reader);
    }

    private Findings run(Superblock sb, int[] slabOwners, Reader reader) {
        long heapSize = sb.slabCount() * sb.slabSize();
        ImageTransaction raw = new ImageTransaction(reader, sb.slabOffset(0), heapSize);
        Map<Integer, List<Long>> slabsOf = new TreeMap<>();
        for (int s = 0; s < slabOwners.length; s++) {
            if (slabOwners[s] >= 0) {
                slabsOf.computeIfAbsent(slabOwners[s], f -> new ArrayList<>()).add((long) s);
            }
        }
        for (Map.Entry<Integer, List<Long>> e : slabsOf.entrySet()) {
            for (long s : e.getValue()) {
                walkSlab(raw, e.getKey(), s * sb.slabSize(), sb.slabSize());
            }
        }
        Map<String, List<Integer>> names = new TreeMap<>();
        for (Map.Entry<Integer, List<Long>> e : slabsOf.entrySet()) {
            walkFrontend(reader, sb, heapSize, e.getKey(), e.getValue().get(0) * sb.slabSize(), names);
        }
        names.forEach((name, fs) -> {
            if (fs.size() > 1) {
                problems.add("root '" + name + "' is in the root directories of frontends " + fs
                        + ": a name created twice (each frontend reaches its own)");
            }
        });
        long unreferenced = blocks.keySet().stream().filter(b -> !owners.containsKey(b)).count();
        if (unreferenced > 0) {
            warnings.add(unreferenced + " allocated blocks are referenced by no named structure (raw allocations, "
                    + "or leaks if only structures are used)");
        }
        return new Findings(List.copyOf(problems), List.copyOf(warnings), List.copyOf(lines), structures, entries,
                blocks.size(), freeBlocks);
    }

    private void walkSlab(ImageTransaction tx, int frontend, long slab, long slabSize) {
        String at = "slab " + slab / slabSize + " of frontend " + frontend + " (heap address " + slab + ")";
        long magic = tx.readLong(slab + SlabHeaderLayout.MAGIC_OFFSET);
        if (magic != SlabHeaderLayout.MAGIC) {
            problems.add(at + ": header magic at " + slab + " expected 0x" + Long.toHexString(SlabHeaderLayout.MAGIC)
                    + ", actual 0x" + Long.toHexString(magic));
            return;
        }
        long bump = tx.readLong(slab + SlabHeaderLayout.BUMP_OFFSET);
        if (bump < SlabHeaderLayout.HEADER_LENGTH || bump > slabSize) {
            problems.add(at + ": bump offset at " + (slab + SlabHeaderLayout.BUMP_OFFSET) + " expected within ["
                    + SlabHeaderLayout.HEADER_LENGTH + ", " + slabSize + "], actual " + bump);
            return;
        }
        Map<Long, Integer> free = new HashMap<>();
        for (int c = 0; c < SlabHeaderLayout.CLASS_COUNT; c++) {
            long from = slab + SlabHeaderLayout.freeHeadOffset(c);
            long block = tx.readLong(from);
            long steps = 0;
            while (block != 0) {
                String entry = at + ": free list of size class " + c + " at " + from;
                if (block < slab + SlabHeaderLayout.HEADER_LENGTH + SlabHeaderLayout.BLOCK_HEADER_LENGTH
                        || block >= slab + bump) {
                    problems.add(entry + " expected a block below the bump offset, actual " + block);
                    break;
                }
                if (free.putIfAbsent(block, c) != null) {
                    problems.add(entry + ": block " + block + " listed twice (a cycle or two lists)");
                    break;
                }
                long header = tx.readLong(block - SlabHeaderLayout.BLOCK_HEADER_LENGTH);
                if (header != 0) {
                    problems.add(entry + ": free block " + block + " header expected 0, actual 0x"
                            + Long.toHexString(header));
                }
                if (++steps > slabSize / SlabHeaderLayout.MIN_BLOCK) {
                    problems.add(entry + ": longer than the slab can hold");
                    break;
                }
                from = block;
                block = tx.readLong(block);
            }
        }
        long pos = SlabHeaderLayout.HEADER_LENGTH;
        Set<Long> met = new HashSet<>();
        long allocated = 0;
        while (pos < bump) {
            long payload = slab + pos + SlabHeaderLayout.BLOCK_HEADER_LENGTH;
            int c = SlabHeaderLayout.sizeClassOf(tx.readLong(slab + pos));
            long size;
            if (c >= 0) {
                size = SlabHeaderLayout.blockSize(c);
                blocks.put(payload, new Allocated(payload, slab + pos + size, frontend));
                allocated++;
            } else if (free.containsKey(payload)) {
                size = SlabHeaderLayout.blockSize(free.get(payload));
                met.add(payload);
                freeBlocks++;
            } else {
                problems.add(at + ": no block header at " + (slab + pos) + " (expected an allocated block's header "
                        + "or a free block on a free list), actual 0x" + Long.toHexString(tx.readLong(slab + pos)));
                return;
            }
            pos += size;
        }
        if (pos != bump) {
            problems.add(at + ": blocks end at offset " + pos + ", expected the bump offset " + bump);
        }
        long live = tx.readLong(slab + SlabHeaderLayout.LIVE_OFFSET);
        if (live != SlabHeaderLayout.LIVE_UNCOUNTED && live != allocated + SlabHeaderLayout.LIVE_EMPTY) {
            problems.add(at + ": live word at " + (slab + SlabHeaderLayout.LIVE_OFFSET) + " expected "
                    + (allocated + SlabHeaderLayout.LIVE_EMPTY) + " (" + allocated + " allocated blocks + 1), actual "
                    + live);
        }
        for (long b : free.keySet()) {
            if (!met.contains(b)) {
                problems.add(at + ": free-list entry " + b + " is not on a block boundary (overlaps a block)");
            }
        }
    }

    private void walkFrontend(Reader reader, Superblock sb, long heapSize, int frontend, long firstSlab,
                              Map<String, List<Integer>> names) {
        ImageTransaction tx = new ImageTransaction(reader, sb.slabOffset(0), heapSize);
        long dir = tx.readLong(firstSlab + SlabHeaderLayout.DIRECTORY_OFFSET);
        tx.reads.clear(); // the slab header is the allocator's; only the directory block is claimed
        if (dir == 0) {
            lines.add("frontend " + frontend + ": no named structures");
            return;
        }
        String where = "root directory of frontend " + frontend + " at " + dir;
        List<RootDirectoryLayout.Entry> dirEntries = new ArrayList<>();
        try {
            long magic = tx.readLong(dir);
            if (magic != RootDirectoryLayout.MAGIC) {
                problems.add(where + ": magic expected 0x" + Long.toHexString(RootDirectoryLayout.MAGIC)
                        + ", actual 0x" + Long.toHexString(magic));
                return;
            }
            int count = tx.readInt(dir + RootDirectoryLayout.COUNT_OFFSET);
            int capacity = tx.readInt(dir + RootDirectoryLayout.CAPACITY_OFFSET);
            if (count < 0 || count > capacity || dir + RootDirectoryLayout.blockLength(capacity) > heapSize) {
                problems.add(where + ": count " + count + " expected within [0, capacity " + capacity + "]");
                return;
            }
            tx.read(dir, RootDirectoryLayout.blockLength(capacity));
            for (int i = 0; i < count; i++) {
                dirEntries.add(RootDirectoryLayout.decodeEntry(tx.read(dir + RootDirectoryLayout.entryOffset(i),
                        RootDirectoryLayout.ENTRY_LENGTH)));
            }
        } catch (RuntimeException e) {
            problems.add(where + ": unreadable: " + e.getMessage());
            return;
        }
        claim(tx, frontend, where);
        lines.add("frontend " + frontend + ": " + dirEntries.size() + " named structures");
        for (RootDirectoryLayout.Entry e : dirEntries) {
            names.computeIfAbsent(e.name(), n -> new ArrayList<>()).add(frontend);
            structure(reader, sb, heapSize, frontend, e);
        }
    }

    private void structure(Reader reader, Superblock sb, long heapSize, int frontend, RootDirectoryLayout.Entry e) {
        structures++;
        String what = "structure '" + e.name() + "' of frontend " + frontend + " at " + e.address();
        ImageTransaction tx = new ImageTransaction(reader, sb.slabOffset(0), heapSize);
        Session session = new Session(tx);
        session.describe(what);
        try {
            Block root = session.load(e.address(), StructureHeaderLayout.ROOT_BLOCK_LENGTH);
            StructureHeaderLayout.checkHeader(root.bytes, e.address());
            int type = StructureHeaderLayout.type(root.bytes);
            if (type != e.type() || StructureHeaderLayout.keyCodecId(root.bytes) != e.keyCodec()
                    || StructureHeaderLayout.valueCodecId(root.bytes) != e.valueCodec()) {
                problems.add(what + ": header type/codecs " + type + "/" + StructureHeaderLayout.keyCodecId(root.bytes)
                        + "/" + StructureHeaderLayout.valueCodecId(root.bytes) + ", directory says " + e.type() + "/"
                        + e.keyCodec() + "/" + e.valueCodec());
                return;
            }
            ValueCodec<?> keyCodec = codec(e.keyCodec());
            ValueCodec<?> valueCodec = keyCodec == null ? null : codec(e.valueCodec());
            if (valueCodec == null) {
                keyCodec = null; // the verifiers decode keys and values together or not at all
            }
            long size;
            if (type == StructureType.BTREE.id()) {
                BTreeCore core = new BTreeCore(session, root);
                BTreeVerifier.verify(core, keyCodec, valueCodec);
                size = core.size();
            } else if (type == StructureType.HASH_MAP.id()) {
                HashCore core = new HashCore(session, root);
                HashVerifier.verify(core, keyCodec, valueCodec);
                size = core.size();
            } else {
                warnings.add(what + ": type " + type + " has no offline verifier; its blocks are not walked");
                return;
            }
            entries += size;
            lines.add("  " + what + ": " + StructureType.fromId(type).displayName() + ", " + size + " entries, "
                    + (keyCodec == null ? "keys and values not decoded (application codecs)" : "every key and value decoded"));
        } catch (RuntimeException damaged) {
            problems.add(what + ": " + damaged.getMessage());
        }
        claim(tx, frontend, what);
    }

    /** Every range {@code tx} read must lie in one allocated block of {@code frontend}, owned by no other user. */
    private void claim(ImageTransaction tx, int frontend, String user) {
        Set<Long> reported = new HashSet<>();
        for (long[] r : tx.reads) {
            Map.Entry<Long, Allocated> b = blocks.floorEntry(r[0]);
            if (b == null || r[0] + r[1] > b.getValue().end()) {
                if (reported.add(r[0])) {
                    problems.add(user + ": read [" + r[0] + ", " + (r[0] + r[1]) + ") expected inside an allocated "
                            + "block, actual " + (b == null ? "before every block" : "beyond the block ["
                            + b.getValue().start() + ", " + b.getValue().end() + ")"));
                }
                continue;
            }
            Allocated a = b.getValue();
            if (a.frontend() != frontend) {
                if (reported.add(a.start())) {
                    problems.add(user + ": block " + a.start() + " expected in frontend " + frontend
                            + "'s slabs, actual frontend " + a.frontend() + "'s");
                }
                continue;
            }
            String previous = owners.putIfAbsent(a.start(), user);
            if (previous != null && !previous.equals(user) && reported.add(a.start())) {
                problems.add("block " + a.start() + " belongs to both " + previous + " and " + user);
            }
        }
    }

    private static ValueCodec<?> codec(int id) {
        try {
            return Codecs.byId(id);
        } catch (IllegalArgumentException notRegistered) {
            return null;
        }
    }
}
