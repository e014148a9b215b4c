package io.asymnvm.backend;

import io.asymnvm.backend.InspectReport.FrontendArea;
import io.asymnvm.backend.InspectReport.Ring;
import io.asymnvm.backend.InspectReport.SlabSummary;
import io.asymnvm.backend.InspectReport.Slot;
import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.CorruptRecordException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.inspect.HeapInspector;
import io.asymnvm.core.layout.ControlBlockLayout;
import io.asymnvm.core.layout.ControlBlockLayout.Checkpoint;
import io.asymnvm.core.layout.LogRecordLayout;
import io.asymnvm.core.layout.RedoBatchLayout;
import io.asymnvm.core.layout.SemanticRecordLayout;
import io.asymnvm.core.layout.SlabHeaderLayout;
import io.asymnvm.core.layout.SlabTableLayout;
import io.asymnvm.core.layout.SuperblockLayout;
import io.asymnvm.core.layout.SuperblockLayout.Superblock;
import io.asymnvm.recovery.log.RingDamage;
import io.asymnvm.recovery.log.RingReader;
import io.asymnvm.recovery.log.RingScanner;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.concurrent.Callable;
import java.util.zip.CRC32C;

/**
 * {@code asymnvm inspect}: offline dump and verification of a PM image. Reads the superblock, every frontend log
 * area (both checkpoint slots, durable semantic watermark, attach epoch and state) and scans both rings from the
 * checkpoint heads with {@link RingScanner} (the semantic ring against its durable watermark, so a bad record
 * before it is corruption, as on a backend start; the redo ring has no watermark, so its first invalid record is
 * its tail), checks that semantic records continue the applied transaction ids, that redo batches parse and
 * write only inside their frontend's slabs, and that the slab owner table holds possible owners whose slabs carry
 * an allocator header. Every CRC read is verified.
 *
 * <p>Read-only by construction: the file is opened with a read-only {@link java.nio.channels.FileChannel}
 * (positional reads, nothing mapped), no lock is taken and no mark file written, so it may run beside a live
 * backend. A live backend may move a checkpoint while the tool reads; a ring whose scan fails is read again when
 * its control block changed meanwhile, so a moving ring is not reported as corrupt.
 *
 * <p>Exit codes: 0 nothing corrupt (warnings, such as a torn ring tail a crash leaves behind, do not count), 1
 * corruption (each problem on standard error, naming file, ring, offset, expected and actual values) or an
 * unreadable file (truncated, zeroed, not a PM image), 2 bad usage.
 */
@Command(name = "inspect", mixinStandardHelpOptions = true,
        description = "Dump a PM image (superblock, log areas, rings, slab table) and verify every CRC; read-only.")
public final class InspectTool implements Callable<Integer> {
    /** Scans of one log area repeated when a live backend changed its control block meanwhile. */
    static final int LIVE_RETRIES = 5;
    private static final int SLAB_TABLE_READ_ENTRIES = 1 << 17;

    @Spec
    CommandSpec spec;

    @Option(names = "--pm", required = true, description = "PM image file to inspect.")
    Path pm;

    @Option(names = "--json", description = "Print one JSON object instead of text.")
    boolean json;

    @Option(names = "--deep", description = "Also walk the block allocator of every slab and every named structure "
            + "(each structure's verify() rules, every block reachable from one owner only); needs the structures "
            + "module on the class path.")
    boolean deep;

    @Override
    public Integer call() {
        // RingScanner warns "torn tail ... truncated" through slf4j; this tool truncates nothing and reports torn
        // tails itself. Effective with slf4j-simple when set before the scanner's logger exists.
        if (System.getProperty("org.slf4j.simpleLogger.log." + RingScanner.class.getName()) == null) {
            System.setProperty("org.slf4j.simpleLogger.log." + RingScanner.class.getName(), "error");
        }
        InspectReport report = inspect(pm);
        HeapInspector.Findings heap = deep ? deepInspect(pm) : null;
        PrintWriter out = spec.commandLine().getOut();
        if (json) {
            out.println(heap == null ? report.toJson() : withDeep(report, heap));
        } else {
            out.println(report.toText().stripTrailing());
            if (heap != null) {
                out.println("deep: " + heap.structures() + " named structures, " + heap.entries() + " entries, "
                        + heap.allocatedBlocks() + " allocated and " + heap.freeBlocks() + " free blocks");
                heap.lines().forEach(l -> out.println("  " + l));
                heap.warnings().forEach(w -> out.println("  warning: " + w));
            }
        }
        out.flush();
        List<String> problems = heap != null ? heap.problems() : report.problems(); // the deep ones include the rest
        if (problems.isEmpty()) {
            return 0;
        }
        PrintWriter err = spec.commandLine().getErr();
        for (String p : problems) {
            err.println("asymnvm inspect: " + p);
        }
        err.flush();
        return 1;
    }

    private static String withDeep(InspectReport report, HeapInspector.Findings heap) {
        ObjectMapper mapper = new ObjectMapper();
        try {
            ObjectNode out = mapper.createObjectNode();
            out.set("inspect", mapper.readTree(report.toJson()));
            out.set("deep", mapper.valueToTree(heap));
            return mapper.writeValueAsString(out);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot write the inspection as JSON", e);
        }
    }

    /**
     * The offline walk of the heap of {@code file} (block allocator, named structures) by the
     * {@link HeapInspector} found on the class path; read-only like {@link #inspect}. It walks the state a backend
     * start would reach: the heap with every complete redo batch after each frontend's checkpoint applied (in a
     * DRAM overlay, the file is not touched), so an image left by a backend killed in the middle of a batch is
     * seen at a transaction boundary. Beside a running backend the heap may change under the walk: use it on an
     * image no backend serves.
     *
     * @throws IllegalStateException if no inspector is on the class path (the structures module provides one)
     */
    public static HeapInspector.Findings deepInspect(Path file) {
        HeapInspector inspector = ServiceLoader.load(HeapInspector.class).findFirst().orElseThrow(() ->
                new IllegalStateException("inspect --deep needs a heap inspector on the class path "
                        + "(module asymnvm-structures)"));
        InspectReport report = inspect(file);
        try (FileChannelRegion region = FileChannelRegion.open(file.toAbsolutePath())) {
            Superblock sb = report.superblock();
            int[] owners = new int[Math.toIntExact(sb.slabCount())];
            readSlabTable(region, sb, owners, new Findings());
            ReplayOverlay overlay = new ReplayOverlay(region, sb);
            for (int f = 0; f < sb.maxFrontends(); f++) {
                overlay.applyPending(f, report.checkpoint(f));
            }
            List<String> problems = new ArrayList<>(report.problems());
            HeapInspector.Findings heap = inspector.inspect(sb, owners, overlay::read);
            problems.addAll(heap.problems());
            List<String> lines = new ArrayList<>(heap.lines());
            lines.add(0, overlay.batches + " redo batches after the checkpoints applied in DRAM before the walk");
            return new HeapInspector.Findings(List.copyOf(problems), heap.warnings(), List.copyOf(lines),
                    heap.structures(), heap.entries(), heap.allocatedBlocks(), heap.freeBlocks());
        }
    }

    /**
     * The image as the replayer would leave it: file pages with the writes of complete redo batches past the
     * checkpoints applied on copies. Batches that write outside their frontend's slabs or do not parse are
     * skipped (the plain inspection reports them).
     */
    private static final class ReplayOverlay {
        private static final int PAGE = 4096;
        private final FileChannelRegion region;
        private final Superblock sb;
        private final Map<Long, byte[]> pages = new HashMap<>();
        long batches;

        ReplayOverlay(FileChannelRegion region, Superblock sb) {
            this.region = region;
            this.sb = sb;
        }

        void applyPending(int f, Checkpoint cp) {
            RingReader reader = new RingReader(region, sb.redoRingOf(f), sb.redoRingCapacity(),
                    LogRecordLayout.TYPE_REDO_BATCH, region.name() + " redo ring of frontend " + f);
            long[] next = {cp.appliedTxId() + 1};
            long heapSize = sb.slabCount() * sb.slabSize();
            try {
                RingScanner.scan(reader, cp.redoHead(), cp.redoHead(), e -> {
                    byte[] batch = e.bytes();
                    long first = RedoBatchLayout.firstTxId(batch);
                    long last = RedoBatchLayout.lastTxId(batch);
                    if (last < next[0] || first != next[0]) {
                        return; // already applied (a re-posted copy), or out of order: not replayed
                    }
                    next[0] = last + 1;
                    batches++;
                    RedoBatchLayout.forEachEntry(batch, new RedoBatchLayout.EntryVisitor() {
                        @Override
                        public void write(long heapOffset, byte[] b, int dataOffset, int length) {
                            if (heapOffset >= 0 && length >= 0 && heapOffset <= heapSize - length) {
                                put(sb.slabOffset(0) + heapOffset, b, dataOffset, length);
                            }
                        }

                        @Override
                        public void commit(long txId) {
                        }
                    });
                });
            } catch (RuntimeException unreadable) {
                // the plain inspection names what is wrong with this ring; replay what came before it
            }
        }

        private void put(long fileOffset, byte[] b, int offset, int length) {
            for (int done = 0; done < length; ) {
                long at = fileOffset + done;
                byte[] page = page(at / PAGE);
                int in = (int) (at % PAGE);
                int n = Math.min(length - done, PAGE - in);
                System.arraycopy(b, offset + done, page, in, n);
                done += n;
            }
        }

        private byte[] page(long index) {
            return pages.computeIfAbsent(index, i -> region.read(i * PAGE,
                    (int) Math.min(PAGE, region.size() - i * PAGE)));
        }

        byte[] read(long fileOffset, int length) {
            byte[] out = region.read(fileOffset, length);
            if (pages.isEmpty()) {
                return out;
            }
            for (long p = fileOffset / PAGE; p <= (fileOffset + Math.max(length, 1) - 1) / PAGE; p++) {
                byte[] page = pages.get(p);
                if (page == null) {
                    continue;
                }
                long from = Math.max(fileOffset, p * PAGE);
                long to = Math.min(fileOffset + length, p * PAGE + page.length);
                System.arraycopy(page, (int) (from - p * PAGE), out, (int) (from - fileOffset), (int) (to - from));
            }
            return out;
        }
    }

    public static void main(String[] args) {
        CommandLine cl = new CommandLine(new InspectTool());
        cl.setExecutionExceptionHandler((ex, cmd, parsed) -> {
            cmd.getErr().println("asymnvm inspect: " + ex.getMessage());
            return 1;
        });
        System.exit(cl.execute(args));
    }

    /**
     * Inspects {@code file}. Corruption found in log areas or the slab table is listed in the report's problems;
     * a file that is not a readable PM image at all (missing, truncated, zeroed, bad superblock) throws.
     *
     * @throws IllegalArgumentException if the file does not exist or is not a regular file
     * @throws AsymNvmException with {@link ErrorCode#CORRUPT_SUPERBLOCK} or
     *         {@link ErrorCode#FORMAT_VERSION_MISMATCH} if the superblock cannot be used
     */
    public static InspectReport inspect(Path file) {
        Path absolute = file.toAbsolutePath();
        if (!Files.exists(absolute)) {
            throw new IllegalArgumentException("PM file " + absolute + " does not exist");
        }
        if (!Files.isRegularFile(absolute)) {
            throw new IllegalArgumentException("PM file " + absolute + " is not a regular file");
        }
        boolean mark = Files.exists(absolute.resolveSibling(absolute.getFileName() + ".mark"));
        try (FileChannelRegion region = FileChannelRegion.open(absolute)) {
            Superblock sb = readSuperblock(region);
            Findings findings = new Findings();
            findings.crcs++; // the superblock's
            int[] owners = new int[Math.toIntExact(sb.slabCount())];
            SlabSummary slabs = readSlabTable(region, sb, owners, findings);
            List<FrontendArea> areas = new ArrayList<>();
            for (int f = 0; f < sb.maxFrontends(); f++) {
                areas.add(readArea(region, sb, f, owners, findings, mark));
            }
            return new InspectReport(absolute.toString(), sb, mark, List.copyOf(areas), slabs, findings.crcs,
                    List.copyOf(findings.warnings), List.copyOf(findings.problems),
                    SuperblockLayout.effectiveEpoch(region, sb)); // a promoted mirror's epoch is outside the CRC
        }
    }

    /** Problems, warnings and the CRC count, collected over the whole image. */
    private static final class Findings {
        final List<String> problems = new ArrayList<>();
        final List<String> warnings = new ArrayList<>();
        long crcs;
    }

    static Superblock readSuperblock(FileChannelRegion region) {
        String where = region.name();
        long size = region.size();
        if (size < SuperblockLayout.LENGTH) {
            throw new AsymNvmException(ErrorCode.CORRUPT_SUPERBLOCK, where + " is not a PM image: it has " + size
                    + " bytes, fewer than the " + SuperblockLayout.LENGTH + "-byte superblock (truncated?)");
        }
        byte[] bytes = region.read(0, SuperblockLayout.LENGTH);
        boolean zero = true;
        for (byte x : bytes) {
            zero &= x == 0;
        }
        if (zero) {
            throw new AsymNvmException(ErrorCode.CORRUPT_SUPERBLOCK, where + " is not a PM image: its superblock "
                    + "(bytes 0.." + SuperblockLayout.LENGTH + ") is all zeros (zeroed, or never formatted)");
        }
        try {
            return SuperblockLayout.decode(bytes, where, size);
        } catch (CorruptRecordException e) {
            ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
            String hint = "";
            if (e.offset() == SuperblockLayout.FILE_SIZE_OFFSET) {
                hint = " (the superblock records " + b.getLong(SuperblockLayout.FILE_SIZE_OFFSET) + " bytes, the file "
                        + "has " + size + ": truncated or extended)";
            } else if (e.offset() == SuperblockLayout.MAGIC_OFFSET && b.getLong(SuperblockLayout.MAGIC_OFFSET) == 0) {
                hint = " (a zero magic: the file was zeroed, or its formatting never completed)";
            }
            throw new AsymNvmException(ErrorCode.CORRUPT_SUPERBLOCK, where + " has no valid superblock: "
                    + e.detail() + hint, e);
        }
    }

    private static SlabSummary readSlabTable(FileChannelRegion region, Superblock sb, int[] owners,
                                             Findings findings) {
        long maxWord = SlabTableLayout.ownerWord(sb.maxFrontends() - 1);
        long[] owned = new long[sb.maxFrontends()];
        long[] roots = new long[sb.maxFrontends()];
        Arrays.fill(roots, -1);
        long free = 0;
        long corrupt = 0;
        String table = region.name() + " slab table";
        for (int start = 0; start < owners.length; start += SLAB_TABLE_READ_ENTRIES) {
            int n = Math.min(SLAB_TABLE_READ_ENTRIES, owners.length - start);
            ByteBuffer words = ByteBuffer.wrap(region.read(SlabTableLayout.entryOffset(sb.slabTableOffset(), start),
                    n * SlabTableLayout.ENTRY_LENGTH)).order(ByteOrder.LITTLE_ENDIAN);
            for (int k = 0; k < n; k++) {
                int i = start + k;
                long word = words.getLong(k * SlabTableLayout.ENTRY_LENGTH);
                if (word < SlabTableLayout.FREE || word > maxWord) {
                    owners[i] = -2;
                    corrupt++;
                    findings.problems.add(new CorruptRecordException(table,
                            SlabTableLayout.entryOffset(sb.slabTableOffset(), i), "slab " + i
                            + " owner word at most " + maxWord, maxWord, word).detail());
                    continue;
                }
                owners[i] = SlabTableLayout.ownerOf(word);
                if (owners[i] < 0) {
                    free++;
                    continue;
                }
                int f = owners[i];
                if (owned[f]++ == 0) {
                    roots[f] = region.getLong(sb.slabOffset(i) + SlabHeaderLayout.ROOT_OFFSET);
                }
                long magic = region.getLong(sb.slabOffset(i) + SlabHeaderLayout.MAGIC_OFFSET);
                if (magic != SlabHeaderLayout.MAGIC) {
                    findings.problems.add(new CorruptRecordException(region.name() + " heap",
                            sb.slabOffset(i) + SlabHeaderLayout.MAGIC_OFFSET, "header magic of slab " + i
                            + " (owned by frontend " + f + ")", SlabHeaderLayout.MAGIC, magic).detail());
                }
            }
        }
        return new SlabSummary(owners.length, free, corrupt, owned, roots);
    }

    /** Reads one log area, again when a live backend changed its control block while a scan failed. */
    private static FrontendArea readArea(FileChannelRegion region, Superblock sb, int f, int[] owners,
                                         Findings findings, boolean mark) {
        for (int attempt = 1; ; attempt++) {
            byte[] control = region.read(sb.controlBlockOf(f), ControlBlockLayout.READ_LENGTH);
            Findings local = new Findings();
            FrontendArea area = readArea(region, sb, f, control, owners, local, mark);
            boolean failed = !local.problems.isEmpty();
            if (failed && attempt < LIVE_RETRIES
                    && !Arrays.equals(control, region.read(sb.controlBlockOf(f), ControlBlockLayout.READ_LENGTH))) {
                continue; // the checkpoint or watermark moved under the scan: a running backend, read again
            }
            findings.problems.addAll(local.problems);
            findings.warnings.addAll(local.warnings);
            findings.crcs += local.crcs;
            return area;
        }
    }

    private static FrontendArea readArea(FileChannelRegion region, Superblock sb, int f, byte[] control,
                                         int[] owners, Findings findings, boolean mark) {
        String area = region.name() + " control block of frontend " + f;
        List<Slot> slots = List.of(slot(control, 0, ControlBlockLayout.SLOT0_OFFSET, area, findings),
                slot(control, 1, ControlBlockLayout.SLOT1_OFFSET, area, findings));
        Checkpoint cp = ControlBlockLayout.newestCheckpoint(control);
        long watermark = ControlBlockLayout.durableSemTail(control);
        RingDamage[] quarantine = new RingDamage[1];
        Ring semantic = scanSemantic(region, sb, f, cp, Math.max(cp.semHead(),
                ControlBlockLayout.mirrorSemStart(control)), watermark, findings, quarantine);
        Ring redo = scanRedo(region, sb, f, cp, owners, findings, quarantine, mark);
        return new FrontendArea(f, sb.controlBlockOf(f), slots, cp, watermark,
                ControlBlockLayout.attachEpoch(control), ControlBlockLayout.state(control), semantic, redo,
                quarantine[0]);
    }

    /**
     * Classifies one checkpoint slot through the layout's own decoder (a copy of the block holding only this
     * slot). A slot failing its CRC is what a crash during a checkpoint update leaves; the backend ignores it, so
     * it is a warning.
     */
    private static Slot slot(byte[] control, int index, int offset, String area, Findings findings) {
        ByteBuffer b = ByteBuffer.wrap(control).order(ByteOrder.LITTLE_ENDIAN);
        long seq = b.getLong(offset + ControlBlockLayout.SLOT_SEQ_OFFSET);
        if (seq == 0) {
            return new Slot(index, 0, Slot.EMPTY);
        }
        byte[] only = new byte[ControlBlockLayout.READ_LENGTH];
        System.arraycopy(control, offset, only, ControlBlockLayout.SLOT0_OFFSET, ControlBlockLayout.SLOT_LENGTH);
        if (ControlBlockLayout.newestCheckpoint(only).seq() == seq) {
            findings.crcs++;
            return new Slot(index, seq, Slot.VALID);
        }
        CRC32C crc = new CRC32C();
        crc.update(control, offset, ControlBlockLayout.SLOT_CRC_OFFSET);
        findings.warnings.add(String.format("%s: checkpoint slot %d (seq %d) fails its crc32c (stored 0x%x, "
                        + "computed 0x%x): a checkpoint update torn by a crash; ignored, as the backend does", area,
                index, seq, Integer.toUnsignedLong(b.getInt(offset + ControlBlockLayout.SLOT_CRC_OFFSET)),
                crc.getValue()));
        return new Slot(index, seq, Slot.INVALID);
    }

    /**
     * {@code from} is the checkpoint's head, or a mirror's semantic start past it (the records between reach the
     * mirror as redo: the first record found there continues from an unknown transaction, past the applied one).
     */
    private static Ring scanSemantic(FileChannelRegion region, Superblock sb, int f, Checkpoint cp, long from,
                                     long watermark, Findings findings, RingDamage[] quarantine) {
        RingReader reader = new RingReader(region, sb.semRingOf(f), sb.semRingCapacity(),
                LogRecordLayout.TYPE_SEMANTIC, region.name() + " semantic ring of frontend " + f);
        long[] seen = new long[3]; // records, first tx, last tx
        String[] gap = new String[1];
        RingScanner.Scan scan;
        try {
            scan = RingScanner.scan(reader, from, watermark, e -> {
                long tx = SemanticRecordLayout.txId(e.bytes());
                long expected = seen[0] != 0 ? seen[2] + 1
                        : from > cp.semHead() && tx > cp.appliedTxId() ? tx : cp.appliedTxId() + 1;
                if (tx != expected && gap[0] == null) {
                    gap[0] = new CorruptRecordException(reader.name(), reader.offsetOf(e.position()),
                            "transaction id (records after the checkpoint continue from applied tx "
                                    + cp.appliedTxId() + " one by one)", expected, tx).detail();
                }
                if (seen[0]++ == 0) {
                    seen[1] = tx;
                }
                seen[2] = tx;
            });
        } catch (CorruptRecordException e) {
            findings.crcs += seen[0];
            findings.problems.add(e.detail() + "; a backend quarantines frontend " + f + " (RING_CORRUPT)");
            quarantine[0] = RingDamage.of(e);
            return new Ring(reader.name(), sb.semRingOf(f), sb.semRingCapacity(), cp.semHead(), watermark, -1,
                    seen[0], seen[1], seen[2], 0, null, e.detail());
        }
        findings.crcs += seen[0];
        if (gap[0] != null) {
            findings.problems.add(gap[0]);
        }
        String torn = tornTail(reader, scan, findings,
                "beyond the durable watermark, so never acknowledged; a backend start truncates it");
        return new Ring(reader.name(), sb.semRingOf(f), sb.semRingCapacity(), cp.semHead(), watermark, scan.tail(),
                scan.records(), seen[1], seen[2], 0, torn, gap[0]);
    }

    private static Ring scanRedo(FileChannelRegion region, Superblock sb, int f, Checkpoint cp, int[] owners,
                                 Findings findings, RingDamage[] quarantine, boolean mark) {
        RingReader reader = new RingReader(region, sb.redoRingOf(f), sb.redoRingCapacity(),
                LogRecordLayout.TYPE_REDO_BATCH, region.name() + " redo ring of frontend " + f);
        long[] seen = new long[4]; // batches, first tx, last tx, copies of applied batches
        long[] next = {cp.appliedTxId() + 1};
        List<String> bad = new ArrayList<>();
        long heapSize = sb.slabCount() * sb.slabSize();
        // no durable watermark for redo: the first invalid batch is the tail (the replayer waits there)
        RingScanner.Scan scan = RingScanner.scan(reader, cp.redoHead(), cp.redoHead(), e -> {
            byte[] batch = e.bytes();
            long first = RedoBatchLayout.firstTxId(batch);
            long last = RedoBatchLayout.lastTxId(batch);
            if (seen[0]++ == 0) {
                seen[1] = first;
            }
            seen[2] = last;
            String at = reader.name() + " at offset " + reader.offsetOf(e.position());
            if (last <= cp.appliedTxId()) {
                seen[3]++; // a copy re-posted after a reconnect; the replayer skips it
            } else if (first != next[0] || last < first) {
                bad.add(new CorruptRecordException(reader.name(), reader.offsetOf(e.position()),
                        "first transaction of a redo batch holding " + first + ".." + last, next[0], first).detail());
            } else {
                next[0] = last + 1;
            }
            try {
                RedoBatchLayout.forEachEntry(batch, new RedoBatchLayout.EntryVisitor() {
                    @Override
                    public void write(long heapOffset, byte[] b, int dataOffset, int length) {
                        if (!ownedBy(owners, sb.slabSize(), heapSize, f, heapOffset, length) && bad.size() < 10) {
                            bad.add("redo batch in " + at + " (tx " + first + ".." + last + ") writes heap range ["
                                    + heapOffset + ", " + (heapOffset + length) + ") outside the slabs of frontend "
                                    + f + "; the replayer stops this frontend there");
                        }
                    }

                    @Override
                    public void commit(long txId) {
                    }
                });
            } catch (IllegalStateException malformed) {
                bad.add("redo batch in " + at + " (tx " + first + ".." + last + ") has a valid crc32c but is "
                        + "malformed: " + malformed.getMessage());
            }
        });
        findings.crcs += seen[0];
        // an invalid batch followed by a valid one is damaged, not torn: the replayer quarantines the frontend;
        // unless the mark file says a backend runs or crashed, where a power failure may have torn it (a start
        // after an unclean shutdown treats it as the tail)
        RingDamage damage = !mark && scan.tail() < scan.head() + reader.capacity()
                ? RingDamage.ofUnwatermarked(reader, reader.read(scan.tail())) : null;
        if (damage != null) {
            bad.add(0, "damaged redo batch in " + damage.describe() + "; a backend quarantines frontend " + f
                    + " (RING_CORRUPT)");
            if (quarantine[0] == null) {
                quarantine[0] = damage;
            }
        }
        findings.problems.addAll(bad);
        String torn = damage != null ? null
                : tornTail(reader, scan, findings, "the replayer waits there for the rest of the batch");
        return new Ring(reader.name(), sb.redoRingOf(f), sb.redoRingCapacity(), cp.redoHead(), cp.redoHead(),
                scan.tail(), scan.records(), seen[1], seen[2], seen[3], torn, bad.isEmpty() ? null : bad.get(0));
    }

    private static boolean ownedBy(int[] owners, long slabSize, long heapSize, int f, long heapOffset, long length) {
        if (heapOffset < 0 || length < 0 || heapOffset > heapSize - length) {
            return false;
        }
        long last = (heapOffset + Math.max(length, 1) - 1) / slabSize;
        for (long s = heapOffset / slabSize; s <= last; s++) {
            if (owners[(int) s] != f) {
                return false;
            }
        }
        return true;
    }

    /**
     * Describes the record at a ring's valid tail if something torn lies there (as {@link RingScanner} tells an
     * empty slot, never written or left from an earlier lap, from a torn one); null for a clean tail.
     */
    private static String tornTail(RingReader reader, RingScanner.Scan scan, Findings findings, String consequence) {
        if (scan.tail() >= scan.head() + reader.capacity()) {
            return null;
        }
        RingReader.Entry e = reader.read(scan.tail());
        if (e.kind() != RingReader.Kind.INVALID) {
            return null;
        }
        boolean empty = ("record length".equals(e.reason()) && e.actual() == 0)
                || ("record position".equals(e.reason()) && e.actual() < e.position());
        if (empty) {
            return null;
        }
        String torn = String.format("torn record at the valid tail of %s, offset %d: %s expected 0x%x, actual "
                + "0x%x; %s", reader.name(), reader.offsetOf(e.position()), e.reason(), e.expected(), e.actual(),
                consequence);
        findings.warnings.add(torn);
        return torn;
    }
}
