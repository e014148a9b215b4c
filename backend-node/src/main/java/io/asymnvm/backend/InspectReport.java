package io.asymnvm.backend;

import io.asymnvm.core.layout.ControlBlockLayout;
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
                            SlabSummary slabs, long crcsVerified, List<String> warnings, List<String> problems) {

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
                               long durableSemTail, long attachEpoch, long state, Ring semantic, Ring redo) {

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
                    && redo.tornTail() == null;
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
        line(b, "superblock: format %d, identity %s, epoch %d, created %s", SuperblockLayout.FORMAT_VERSION,
                sb.identity(), sb.epoch(), Instant.ofEpochMilli(sb.createdMillis()));
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

    /** One JSON object (no trailing newline). */
    public String toJson() {
        Superblock sb = superblock;
        Json j = new Json();
        j.open();
        j.key("file").string(file);
        j.key("ok").bool(ok());
        j.key("mark_file").bool(markFile);
        j.key("superblock").open();
        j.key("format_version").number(SuperblockLayout.FORMAT_VERSION);
        j.key("page_size").number(sb.pageSize());
        j.key("file_size").number(sb.fileSize());
        j.key("slab_size").number(sb.slabSize());
        j.key("slab_count").number(sb.slabCount());
        j.key("max_frontends").number(sb.maxFrontends());
        j.key("slab_table_offset").number(sb.slabTableOffset());
        j.key("log_area_offset").number(sb.logAreaOffset());
        j.key("log_area_stride").number(sb.logAreaStride());
        j.key("sem_ring_capacity").number(sb.semRingCapacity());
        j.key("redo_ring_capacity").number(sb.redoRingCapacity());
        j.key("heap_offset").number(sb.heapOffset());
        j.key("epoch").number(sb.epoch());
        j.key("identity").string(sb.identity().toString());
        j.key("created_millis").number(sb.createdMillis());
        j.close();
        j.key("frontends").openArray();
        for (FrontendArea f : frontends) {
            j.open();
            j.key("id").number(f.id());
            j.key("state").string(f.stateName());
            j.key("attach_epoch").number(f.attachEpoch());
            j.key("control_offset").number(f.controlOffset());
            Checkpoint cp = f.checkpoint();
            j.key("checkpoint").open();
            j.key("seq").number(cp.seq());
            j.key("applied_tx").number(cp.appliedTxId());
            j.key("redo_head").number(cp.redoHead());
            j.key("sem_head").number(cp.semHead());
            j.close();
            j.key("slots").openArray();
            for (Slot s : f.slots()) {
                j.open().key("index").number(s.index()).key("seq").number(s.seq()).key("status").string(s.status())
                        .close();
            }
            j.closeArray();
            j.key("durable_sem_tail").number(f.durableSemTail());
            j.key("semantic_ring");
            ring(j, f.semantic());
            j.key("redo_ring");
            ring(j, f.redo());
            j.close();
        }
        j.closeArray();
        j.key("slab_table").open();
        j.key("slabs").number(slabs.slabs());
        j.key("free").number(slabs.free());
        j.key("corrupt").number(slabs.corrupt());
        j.key("owned").open();
        for (int f = 0; f < slabs.owned().length; f++) {
            if (slabs.owned()[f] > 0) {
                j.key(Integer.toString(f)).number(slabs.owned()[f]);
            }
        }
        j.close();
        j.key("roots").open();
        for (int f = 0; f < slabs.roots().length; f++) {
            if (slabs.owned()[f] > 0) {
                j.key(Integer.toString(f)).number(slabs.roots()[f]);
            }
        }
        j.close();
        j.close();
        j.key("crcs_verified").number(crcsVerified);
        j.key("warnings").strings(warnings);
        j.key("problems").strings(problems);
        j.close();
        return j.toString();
    }

    private static void ring(Json j, Ring r) {
        j.open();
        j.key("offset").number(r.offset());
        j.key("capacity").number(r.capacity());
        j.key("head").number(r.head());
        j.key("watermark").number(r.watermark());
        j.key("valid_tail").number(r.validTail());
        j.key("records").number(r.records());
        j.key("first_tx").number(r.firstTxId());
        j.key("last_tx").number(r.lastTxId());
        j.key("applied_copies").number(r.appliedCopies());
        j.key("torn_tail").string(r.tornTail());
        j.key("error").string(r.error());
        j.close();
    }

    /** The smallest JSON writer that does: objects, arrays, numbers, booleans, escaped strings, null. */
    private static final class Json {
        private final StringBuilder b = new StringBuilder();
        private boolean needComma;

        Json open() {
            comma();
            b.append('{');
            needComma = false;
            return this;
        }

        Json close() {
            b.append('}');
            needComma = true;
            return this;
        }

        Json openArray() {
            comma();
            b.append('[');
            needComma = false;
            return this;
        }

        Json closeArray() {
            b.append(']');
            needComma = true;
            return this;
        }

        Json key(String k) {
            comma();
            quote(k);
            b.append(':');
            needComma = false;
            return this;
        }

        Json number(long v) {
            comma();
            b.append(v);
            needComma = true;
            return this;
        }

        Json bool(boolean v) {
            comma();
            b.append(v);
            needComma = true;
            return this;
        }

        Json string(String v) {
            comma();
            if (v == null) {
                b.append("null");
            } else {
                quote(v);
            }
            needComma = true;
            return this;
        }

        Json strings(List<String> values) {
            openArray();
            for (String v : values) {
                string(v);
            }
            return closeArray();
        }

        private void comma() {
            if (needComma) {
                b.append(',');
                needComma = false;
            }
        }

        private void quote(String s) {
            b.append('"');
            for (int i = 0; i < s.length(); i++) {
                char c = s.charAt(i);
                switch (c) {
                    case '"' -> b.append("\\\"");
                    case '\\' -> b.append("\\\\");
                    case '\n' -> b.append("\\n");
                    case '\r' -> b.append("\\r");
                    case '\t' -> b.append("\\t");
                    default -> {
                        if (c < 0x20) {
                            b.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
                        } else {
                            b.append(c);
                        }
                    }
                }
            }
            b.append('"');
        }

        @Override
        public String toString() {
            return b.toString();
        }
    }
}
