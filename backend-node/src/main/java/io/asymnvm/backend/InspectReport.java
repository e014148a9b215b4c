package io.asymnvm.backend;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import io.asymnvm.core.layout.ControlBlockLayout;
import io.asymnvm.recovery.log.RingDamage;
import io.asymnvm.core.layout.ControlBlockLayout.Checkpoint;
import io.asymnvm.core.layout.SuperblockLayout;
import io.asymnvm.core.layout.SuperblockLayout.Superblock;

import java.time.Instant;
import java.util.List;
import java.util.Locale;

/**
 * What {@link InspectTool} found in a PM image: the superblock, every frontend log area (checkpoint slots, durable
 * semantic watermark, attach epoch and state, both rings from their checkpoint heads to their valid tails) and the
 * slab owner table, plus every problem (corruption: the tool exits non-zero) and warning (a state a crash
 * legitimately leaves behind, such as a torn ring tail). Renders as text for people and as one JSON object.
 *
 * @param file          absolute path of the image
 * @param markFile      whether the backend's mark file exists (a backend runs, or the last one did not shut down)
 * @param crcsVerified  superblock, checkpoint slots and ring records whose CRC32C was checked and matched
 */
public record InspectReport(String file, Superblock superblock, boolean markFile, List<FrontendArea> frontends,
                            SlabSummary slabs, long crcsVerified, List<String> warnings, List<String> problems,
                            long effectiveEpoch) {
    private static final ObjectMapper MAPPER = new ObjectMapper();


    /** True when nothing corrupt was found. */
    public boolean ok() {
        return problems.isEmpty();
    }

    /** The checkpoint of frontend {@code id}. */
    public Checkpoint checkpoint(int id) {
        return frontends.get(id).checkpoint();
    }

    /** One checkpoint slot of a control block: never written (seq 0), valid, or failing its CRC. */
    public record Slot(int index, long seq, String status) {
        public static final String EMPTY = "empty";
        public static final String VALID = "valid";
        public static final String INVALID = "invalid";
    }

    /**
     * One ring from its checkpoint head. {@code validTail} is -1 when the scan stopped on corruption
     * ({@code error}); {@code tornTail} describes a torn record at the tail (null if the tail is clean).
     * {@code firstTxId}/{@code lastTxId} are 0 without records; for the redo ring they span the batches found
     * (including copies of already applied batches, counted in {@code appliedCopies}).
     */
    public record Ring(String name, long offset, long capacity, long head, long watermark, long validTail,
                       long records, long firstTxId, long lastTxId, long appliedCopies, String tornTail,
                       String error) {
    }

    /** One frontend's log area. */
    public record FrontendArea(int id, long controlOffset, List<Slot> slots, Checkpoint checkpoint,
                               long durableSemTail, long attachEpoch, long state, Ring semantic, Ring redo,
                               RingDamage quarantine) {

        public String stateName() {
            if (state == ControlBlockLayout.STATE_NEVER_ATTACHED) {
                return "never attached";
            }
            if (state == ControlBlockLayout.STATE_ATTACHED) {
                return "attached";
            }
            return state == ControlBlockLayout.STATE_DETACHED ? "detached" : "unknown state " + state;
        }

        /** Never attached and nothing in either ring: not worth a paragraph of its own. */
        boolean untouched() {
            return state == ControlBlockLayout.STATE_NEVER_ATTACHED && attachEpoch == 0
                    && checkpoint.seq() == 0 && semantic.records() == 0 && redo.records() == 0
                    && semantic.error() == null && redo.error() == null && semantic.tornTail() == null
                    && redo.tornTail() == null && quarantine == null;
        }
    }

    /**
     * The slab owner table: {@code owned[f]} slabs per frontend, {@code roots[f]} the root word of frontend
     * {@code f}'s first slab (0 = none, -1 = owns no slab), {@code corrupt} entries with an impossible owner word.
     */
    public record SlabSummary(long slabs, long free, long corrupt, long[] owned, long[] roots) {
    }

    /** A few aligned paragraphs. */
    public String toText() {
        Superblock sb = superblock;
        StringBuilder b = new StringBuilder();
        line(b, "PM image %s (%,d bytes)", file, sb.fileSize());
        line(b, "superblock: format %d, identity %s, epoch %d%s, created %s", SuperblockLayout.FORMAT_VERSION,
                sb.identity(), effectiveEpoch, effectiveEpoch > sb.epoch()
                        ? " (promoted from a mirror; formatted with epoch " + sb.epoch() + ")" : "",
                Instant.ofEpochMilli(sb.createdMillis()));
        line(b, "  page %d B, %,d slabs of %,d B (heap at %d), slab table at %d", sb.pageSize(), sb.slabCount(),
                sb.slabSize(), sb.heapOffset(), sb.slabTableOffset());
        line(b, "  %d frontend log areas at %d (stride %,d): semantic ring %,d B, redo ring %,d B",
                sb.maxFrontends(), sb.logAreaOffset(), sb.logAreaStride(), sb.semRingCapacity(),
                sb.redoRingCapacity());
        line(b, "  mark file: %s", markFile ? "present (a backend is running, or the last one did not shut down "
                + "cleanly)" : "absent (no backend running; the last one shut down cleanly)");
        int untouched = 0;
        for (FrontendArea f : frontends) {
            if (f.untouched()) {
                untouched++;
                continue;
            }
            Checkpoint cp = f.checkpoint();
            line(b, "frontend %d: %s, attach epoch %d", f.id(), f.stateName(), f.attachEpoch());
            if (f.quarantine() != null) {
                line(b, "  QUARANTINED: a backend refuses its attach (RING_CORRUPT) and serves the others; damaged "
                        + "record in %s", f.quarantine().describe());
            }
            line(b, "  checkpoint seq %d: applied tx %d, redo head %d, semantic head %d  [slots: %s]", cp.seq(),
                    cp.appliedTxId(), cp.redoHead(), cp.semHead(), slots(f.slots()));
            Ring s = f.semantic();
            line(b, "  semantic ring at %d: head %d, durable watermark %d, %s", s.offset(), s.head(),
                    f.durableSemTail(), ringState(s, "records", "tx"));
            Ring r = f.redo();
            line(b, "  redo ring at %d: head %d, %s", r.offset(), r.head(), ringState(r, "batches", "tx"));
        }
        if (untouched > 0) {
            line(b, "%d other frontend log area%s never attached, rings empty", untouched, untouched == 1 ? "" : "s");
        }
        StringBuilder owners = new StringBuilder();
        for (int f = 0; f < slabs.owned().length; f++) {
            if (slabs.owned()[f] > 0) {
                owners.append(String.format(Locale.ROOT, "; frontend %d owns %d (root %d)", f, slabs.owned()[f],
                        slabs.roots()[f]));
            }
        }
        line(b, "slab table: %,d slabs, %,d free%s%s", slabs.slabs(), slabs.free(), owners,
                slabs.corrupt() > 0 ? "; " + slabs.corrupt() + " corrupt entries" : "");
        for (String w : warnings) {
            line(b, "warning: %s", w);
        }
        if (problems.isEmpty()) {
            line(b, "check: OK (%,d CRCs verified, no corruption)", crcsVerified);
        } else {
            line(b, "check: FAILED (%d problem%s; %,d CRCs verified)", problems.size(),
                    problems.size() == 1 ? "" : "s", crcsVerified);
            for (String p : problems) {
                line(b, "  %s", p);
            }
        }
        return b.toString();
    }

    private static String slots(List<Slot> slots) {
        StringBuilder b = new StringBuilder();
        for (Slot s : slots) {
            if (b.length() > 0) {
                b.append(", ");
            }
            b.append(s.index()).append(' ').append(s.status());
            if (!Slot.EMPTY.equals(s.status())) {
                b.append(" seq ").append(s.seq());
            }
        }
        return b.toString();
    }

    private static String ringState(Ring r, String unit, String ids) {
        if (r.error() != null) {
            return String.format(Locale.ROOT, "CORRUPT after %d valid %s", r.records(), unit);
        }
        String range = r.records() == 0 ? "" : String.format(Locale.ROOT, " (%s %d..%d)", ids, r.firstTxId(),
                r.lastTxId());
        String copies = r.appliedCopies() == 0 ? "" : String.format(Locale.ROOT, ", %d already applied",
                r.appliedCopies());
        String torn = r.tornTail() == null ? "" : ", torn record at the tail";
        return String.format(Locale.ROOT, "valid tail %d: %d %s%s%s%s", r.validTail(), r.records(), unit, range,
                copies, torn);
    }

    private static void line(StringBuilder b, String format, Object... args) {
        b.append(String.format(Locale.ROOT, format, args)).append('\n');
    }

    /** One JSON object (no trailing newline), written by Jackson. */
    public String toJson() {
        Superblock sb = superblock;
        ObjectNode root = MAPPER.createObjectNode();
        root.put("file", file);
        root.put("ok", ok());
        root.put("mark_file", markFile);
        root.putObject("superblock")
                .put("format_version", SuperblockLayout.FORMAT_VERSION)
                .put("page_size", sb.pageSize())
                .put("file_size", sb.fileSize())
                .put("slab_size", sb.slabSize())
                .put("slab_count", sb.slabCount())
                .put("max_frontends", sb.maxFrontends())
                .put("slab_table_offset", sb.slabTableOffset())
                .put("log_area_offset", sb.logAreaOffset())
                .put("log_area_stride", sb.logAreaStride())
                .put("sem_ring_capacity", sb.semRingCapacity())
                .put("redo_ring_capacity", sb.redoRingCapacity())
                .put("heap_offset", sb.heapOffset())
                .put("epoch", effectiveEpoch)
                .put("formatted_epoch", sb.epoch())
                .put("identity", sb.identity().toString())
                .put("created_millis", sb.createdMillis());
        ArrayNode areas = root.putArray("frontends");
        for (FrontendArea f : frontends) {
            ObjectNode a = areas.addObject();
            a.put("id", f.id());
            a.put("state", f.stateName());
            a.put("attach_epoch", f.attachEpoch());
            a.put("control_offset", f.controlOffset());
            Checkpoint cp = f.checkpoint();
            a.putObject("checkpoint").put("seq", cp.seq()).put("applied_tx", cp.appliedTxId())
                    .put("redo_head", cp.redoHead()).put("sem_head", cp.semHead());
            ArrayNode slots = a.putArray("slots");
            for (Slot s : f.slots()) {
                slots.addObject().put("index", s.index()).put("seq", s.seq()).put("status", s.status());
            }
            a.put("durable_sem_tail", f.durableSemTail());
            ring(a.putObject("semantic_ring"), f.semantic());
            ring(a.putObject("redo_ring"), f.redo());
            a.put("quarantined", f.quarantine() != null);
            if (f.quarantine() != null) {
                RingDamage q = f.quarantine();
                a.putObject("quarantine").put("ring", q.ring()).put("offset", q.offset()).put("what", q.what())
                        .put("expected", q.expected()).put("actual", q.actual());
            }
        }
        ObjectNode table = root.putObject("slab_table");
        table.put("slabs", slabs.slabs()).put("free", slabs.free()).put("corrupt", slabs.corrupt());
        ObjectNode owned = table.putObject("owned");
        ObjectNode roots = table.putObject("roots");
        for (int f = 0; f < slabs.owned().length; f++) {
            if (slabs.owned()[f] > 0) {
                owned.put(Integer.toString(f), slabs.owned()[f]);
                roots.put(Integer.toString(f), slabs.roots()[f]);
            }
        }
        root.put("crcs_verified", crcsVerified);
        warnings.forEach(root.putArray("warnings")::add);
        problems.forEach(root.putArray("problems")::add);
        try {
            return MAPPER.writeValueAsString(root);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot write the inspection as JSON", e);
        }
    }

    private static void ring(ObjectNode j, Ring r) {
        j.put("offset", r.offset());
        j.put("capacity", r.capacity());
        j.put("head", r.head());
        j.put("watermark", r.watermark());
        j.put("valid_tail", r.validTail());
        j.put("records", r.records());
        j.put("first_tx", r.firstTxId());
        j.put("last_tx", r.lastTxId());
        j.put("applied_copies", r.appliedCopies());
        j.put("torn_tail", r.tornTail());
        j.put("error", r.error());
    }
}
