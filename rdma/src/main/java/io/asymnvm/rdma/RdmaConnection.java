package io.asymnvm.rdma;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.fabric.Completion;
import io.asymnvm.core.fabric.FabricConnection;
import io.asymnvm.core.fabric.FabricCounters;
import io.asymnvm.rdma.RdmaMessageLayout.Key;
import io.asymnvm.rdma.RdmaMessageLayout.Range;
import io.asymnvm.rdma.RdmaMessageLayout.Response;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * The requester side of one rdma connection: READ and WRITE as one-sided RDMA operations on the responder's
 * registered memory, CAS, FLUSH and control calls as two-sided messages ({@link RdmaMessageLayout}).
 *
 * <p><b>Order.</b> The contract says operations complete in posting order and take effect in it. On one reliable
 * connection a SEND follows earlier WRITEs (the responder's CPU sees their data when it sees the message), and
 * every WRITE and SEND is posted with IBV_SEND_FENCE so neither overtakes an earlier READ. What the queue pair does
 * not order is a one-sided operation after a two-sided one: the responder's NIC could execute the READ before its
 * CPU ran the CAS. So a READ or WRITE posted while a message is outstanding waits here until its reply arrived;
 * completions are handed out strictly in posting order.
 *
 * <p><b>Keys and errors.</b> Keys (rkey, remote address, length, access per registered memory region) arrive with
 * control replies for what the session was granted. A READ or WRITE the keys do not cover (not attached, not
 * granted, read-only, out of bounds, unknown region) is not guessed at: it becomes an ACCESS message, and the
 * responder's {@link io.asymnvm.core.fabric.EmulatedNic} gives the same verdict and error code the tcp fabric
 * would; if it allows the operation, its reply carries the keys and the operation then runs one-sided.
 *
 * <p><b>Persistence.</b> See {@link #flush}. Thread-safe: posts and completions synchronise on one lock; completions
 * are signalled outside it.
 */
final class RdmaConnection implements FabricConnection, QueuePair.Listener {
    private static final int READ = 1;
    private static final int WRITE = 2;
    private static final int MESSAGE = 3;

    private final QueuePair channel;
    private final RdmaOptions options;
    private final ByteBuffer staging;
    private final long stagingAddress;
    private final int stagingLkey;
    private final Runnable releaseStaging;
    private final FabricCounters counters = new FabricCounters();
    private final Object lock = new Object();
    private final ArrayDeque<Op> blocked = new ArrayDeque<>();
    private final ArrayDeque<Op> issued = new ArrayDeque<>();
    private final ArrayDeque<Op> awaitingReply = new ArrayDeque<>();
    private final Map<Long, Chunk> inFlight = new HashMap<>();
    private final ArrayDeque<Integer> freeSlots = new ArrayDeque<>();
    private final Map<Integer, List<Key>> keys = new HashMap<>();
    private final List<Range> written = new ArrayList<>();
    private final byte[] encodeBuffer = new byte[RdmaMessageLayout.MESSAGE_LENGTH];
    private long nextChunkId;
    private long messagesSent;
    private int nextSeq;
    private boolean open = true;
    private boolean closed;
    private String lostReason = "connection closed";

    /** One posted operation. */
    private static final class Op {
        final int kind;
        final Completion completion;
        final int region;
        final long offset;
        final int length;
        byte[] data;
        final byte type;
        final long arg1;
        final long arg2;
        final byte[] payload;
        int seq;
        boolean inIssued;
        boolean verdict;        // sent as an ACCESS message, waiting for the responder's verdict
        boolean ready;          // verdict positive, one-sided part not issued yet
        int chunksLeft;
        boolean done;
        AsymNvmException error;
        long value1;
        long value2;
        byte[] body;

        Op(int kind, Completion c, int region, long offset, int length, byte[] data, byte type, long arg1,
           long arg2, byte[] payload) {
            this.kind = kind;
            this.completion = c;
            this.region = region;
            this.offset = offset;
            this.length = length;
            this.data = data;
            this.type = type;
            this.arg1 = arg1;
            this.arg2 = arg2;
            this.payload = payload;
        }
    }

    /** One RDMA READ/WRITE work request of an operation, using one staging slot. */
    private record Chunk(Op op, int slot, int opOffset, int length) {
    }

    /**
     * @param staging        {@code options.maxTransfer()} bytes of memory registered for local write, at
     *                       {@code stagingAddress} under {@code stagingLkey}
     * @param releaseStaging deregisters the staging memory (on close)
     */
    RdmaConnection(QueuePair channel, RdmaOptions options, ByteBuffer staging, long stagingAddress, int stagingLkey,
                   Runnable releaseStaging) {
        this.channel = channel;
        this.options = options;
        this.staging = staging;
        this.stagingAddress = stagingAddress;
        this.stagingLkey = stagingLkey;
        this.releaseStaging = releaseStaging;
        for (int i = 0; i < options.stagingSlots(); i++) {
            freeSlots.add(i);
        }
    }

    // ---- posting ----

    @Override
    public Completion read(int regionId, long offset, int length) {
        counters.read(length);
        return post(new Op(READ, new Completion(counters), regionId, offset, length, null, (byte) 0, 0, 0, null));
    }

    @Override
    public Completion write(int regionId, long offset, byte[] data, int dataOffset, int length) {
        counters.write(length);
        byte[] copy = java.util.Arrays.copyOfRange(data, dataOffset, dataOffset + length);
        return post(new Op(WRITE, new Completion(counters), regionId, offset, length, copy, (byte) 0, 0, 0, null));
    }

    @Override
    public Completion compareAndSwap(int regionId, long offset, long expected, long update) {
        counters.atomic();
        return post(message(RdmaMessageLayout.REQ_CAS, regionId, offset, expected, update, new byte[0]));
    }

    /**
     * Makes what this connection wrote durable, after "Correct, Fast Remote Persistence", by the responder's
     * {@link io.asymnvm.core.fabric.PersistenceDomain}:
     * <ul>
     * <li>{@code ADR}, DDIO on: the WRITEs may sit in the responder's last-level cache, so this SEND (after them on
     *     the queue pair) asks the responder to write back the ranges it names; {@code EmulatedNic} persists them.
     * <li>{@code ADR}, DDIO off: a READ after the WRITEs would drain them to the memory controller, but the
     *     durable watermark (the stamp) is the responder's to write and persist, so the same SEND is used; the
     *     write-back it asks for is then redundant and cheap.
     * <li>{@code EADR} and {@code WHOLE_SYSTEM}: a WRITE is durable once placed; the SEND still moves the stamp and
     *     tells the responder what was written (its write hooks wake the replayer), and persists nothing.
     * </ul>
     * Either way one round trip.
     */
    @Override
    public Completion flush(long stamp, boolean stamped) {
        counters.flush();
        return post(message(RdmaMessageLayout.REQ_FLUSH, 0, 0, stamp, stamped ? 1 : 0, null));
    }

    @Override
    public Completion call(byte[] request) {
        counters.control(request.length);
        if (request.length > RdmaMessageLayout.MAX_REQUEST_PAYLOAD) {
            return Completion.failed(counters, new AsymNvmException(ErrorCode.BAD_REQUEST, "control request of "
                    + request.length + " bytes exceeds the rdma message limit " + RdmaMessageLayout.MAX_REQUEST_PAYLOAD));
        }
        return post(message(RdmaMessageLayout.REQ_CONTROL, 0, 0, 0, 0, request.clone()));
    }

    private Op message(byte type, int region, long offset, long arg1, long arg2, byte[] payload) {
        return new Op(MESSAGE, new Completion(counters), region, offset, 0, null, type, arg1, arg2, payload);
    }

    private Completion post(Op op) {
        if ((op.kind == READ || op.kind == WRITE) && op.length > options.maxTransfer()) {
            op.completion.fail(new AsymNvmException(ErrorCode.BAD_REQUEST, "transfer of " + op.length
                    + " bytes exceeds the rdma staging limit " + options.maxTransfer()
                    + " (options staging-slots x slot-bytes)"));
            return op.completion;
        }
        List<Op> finished;
        synchronized (lock) {
            if (!open) {
                op.completion.fail(lost());
                return op.completion;
            }
            blocked.add(op);
            finished = pump();
        }
        signal(finished);
        return op.completion;
    }

    // ---- issuing (under lock) ----

    /** Issues what may go now, in order; returns the operations completed at the head, to signal outside. */
    private List<Op> pump() {
        try {
            for (Op op : issued) {
                if (op.ready && !issueOneSided(op)) {
                    return drainDone();
                }
            }
            while (!blocked.isEmpty() && tryIssue(blocked.peek())) {
                blocked.poll();
            }
        } catch (IOException | RuntimeException e) {
            failAll("posting failed: " + e);
        }
        return drainDone();
    }

    private boolean tryIssue(Op op) throws IOException {
        for (Op o : issued) {
            if (o.verdict || o.ready) {
                return false; // an operation still deciding its path holds everything behind it
            }
        }
        if (op.kind == MESSAGE) {
            return sendMessage(op, op.type, op.region, op.offset, op.arg1, op.arg2);
        }
        if (!awaitingReply.isEmpty()) {
            return false;
        }
        if (!covered(op)) {
            op.verdict = true;
            if (!sendMessage(op, RdmaMessageLayout.REQ_ACCESS, op.region, op.offset, op.length,
                    op.kind == WRITE ? 1 : 0)) {
                op.verdict = false;
                return false;
            }
            return true;
        }
        if (!issueOneSided(op)) {
            return false;
        }
        op.inIssued = true;
        issued.add(op);
        return true;
    }

    private boolean sendMessage(Op op, byte type, int region, long offset, long arg1, long arg2) throws IOException {
        if (awaitingReply.size() >= options.depth()) {
            return false;
        }
        int seq = nextSeq++;
        ByteBuffer dst = ByteBuffer.wrap(encodeBuffer);
        int length = type == RdmaMessageLayout.REQ_FLUSH
                ? RdmaMessageLayout.encodeFlush(dst, seq, arg1, arg2 == 1, drainWritten())
                : RdmaMessageLayout.encodeRequest(dst, type, seq, region, offset, arg1, arg2, op.payload, 0,
                op.payload == null ? 0 : op.payload.length);
        op.seq = seq;
        awaitingReply.add(op);
        if (!op.inIssued) {
            op.inIssued = true;
            issued.add(op);
        }
        channel.send(encodeBuffer, length, true);
        messagesSent++;
        return true;
    }

    /** Whether the keys cover the whole operation with the access it needs. */
    private boolean covered(Op op) {
        if (op.offset < 0 || op.length < 0) {
            return false;
        }
        long at = op.offset;
        long end = op.offset + op.length;
        if (op.length == 0) {
            return segment(op.region, at, 0, op.kind == WRITE) != null;
        }
        while (at < end) {
            Key k = segment(op.region, at, 1, op.kind == WRITE);
            if (k == null) {
                return false;
            }
            at = Math.min(end, k.windowOffset() + k.length());
        }
        return true;
    }

    private Key segment(int region, long at, long len, boolean write) {
        List<Key> ks = keys.get(region);
        if (ks == null) {
            return null;
        }
        for (Key k : ks) {
            if (k.covers(at, len) && (!write || k.access().allowsWrite())) {
                return k;
            }
        }
        return null;
    }

    /** Posts the op's READ/WRITE work requests if enough staging slots are free; false (nothing posted) if not. */
    private boolean issueOneSided(Op op) throws IOException {
        List<Chunk> chunks = new ArrayList<>();
        List<Key> segs = new ArrayList<>();
        int done = 0;
        while (done < op.length) {
            Key k = segment(op.region, op.offset + done, 1, op.kind == WRITE);
            long segLeft = k.windowOffset() + k.length() - (op.offset + done);
            int n = (int) Math.min(Math.min(op.length - done, options.slotBytes()), segLeft);
            chunks.add(new Chunk(op, -1, done, n));
            segs.add(k);
            done += n;
        }
        if (chunks.size() > freeSlots.size()) {
            return false; // waits for slots; a ready operation stays ready and holds everything behind it
        }
        op.ready = false;
        if (op.kind == READ) {
            op.data = new byte[op.length];
        }
        if (chunks.isEmpty()) {
            op.done = true;
            return true;
        }
        for (int i = 0; i < chunks.size(); i++) {
            Chunk c = chunks.get(i);
            Key k = segs.get(i);
            int slot = freeSlots.poll();
            long slotAt = (long) slot * options.slotBytes();
            if (op.kind == WRITE) {
                ByteBuffer dst = staging.duplicate();
                dst.position((int) slotAt);
                dst.put(op.data, c.opOffset(), c.length());
            }
            long id = nextChunkId++;
            inFlight.put(id, new Chunk(op, slot, c.opOffset(), c.length()));
            op.chunksLeft++;
            long remote = k.remoteAddress() + (op.offset + c.opOffset() - k.windowOffset());
            channel.postOneSided(op.kind == WRITE, stagingAddress + slotAt, stagingLkey, c.length(), remote, k.rkey(),
                    id);
        }
        if (op.kind == WRITE) {
            recordWritten(op.region, op.offset, op.length);
        }
        return true;
    }

    private void recordWritten(int region, long offset, int length) {
        if (!written.isEmpty()) {
            Range last = written.get(written.size() - 1);
            if (last.regionId() == region && last.offset() + last.length() == offset
                    && (long) last.length() + length <= Integer.MAX_VALUE) {
                written.set(written.size() - 1, new Range(region, last.offset(), last.length() + length));
                return;
            }
        }
        written.add(new Range(region, offset, length));
    }

    /** The ranges written since the last FLUSH; too many are coalesced per region (persisting more, never less). */
    private List<Range> drainWritten() {
        List<Range> out = new ArrayList<>(written);
        written.clear();
        if (out.size() <= RdmaMessageLayout.MAX_FLUSH_RANGES) {
            return out;
        }
        Map<Integer, long[]> byRegion = new java.util.LinkedHashMap<>();
        for (Range r : out) {
            byRegion.merge(r.regionId(), new long[] {r.offset(), r.offset() + r.length()},
                    (a, b) -> new long[] {Math.min(a[0], b[0]), Math.max(a[1], b[1])});
        }
        List<Range> merged = new ArrayList<>();
        byRegion.forEach((region, span) -> merged.add(new Range(region, span[0], (int) (span[1] - span[0]))));
        return merged;
    }

    private List<Op> drainDone() {
        List<Op> out = null;
        while (!issued.isEmpty() && issued.peek().done) {
            if (out == null) {
                out = new ArrayList<>();
            }
            out.add(issued.poll());
        }
        return out == null ? List.of() : out;
    }

    private static void signal(List<Op> finished) {
        for (Op op : finished) {
            if (op.error != null) {
                op.completion.fail(op.error);
            } else {
                op.completion.complete(op.kind == MESSAGE ? op.body : op.data, op.value1, op.value2);
            }
        }
    }

    // ---- completions (DiSNI's completion-queue thread) ----

    @Override
    public void onOneSided(QueuePair ch, long id) {
        List<Op> finished;
        synchronized (lock) {
            Chunk c = inFlight.remove(id);
            if (c == null) {
                return;
            }
            if (c.op().kind == READ) {
                ByteBuffer src = staging.duplicate();
                src.position(c.slot() * options.slotBytes());
                src.get(c.op().data, c.opOffset(), c.length());
            }
            freeSlots.add(c.slot());
            if (--c.op().chunksLeft == 0) {
                c.op().done = true;
            }
            finished = pump();
        }
        signal(finished);
    }

    @Override
    public void onMessage(QueuePair ch, ByteBuffer message, int length) {
        List<Op> finished;
        synchronized (lock) {
            Response r;
            try {
                r = RdmaMessageLayout.decodeResponse(message, length);
            } catch (AsymNvmException e) {
                failAll("malformed response from the responder: " + e.getMessage());
                finished = drainDone();
                r = null;
            }
            if (r != null) {
                finished = onResponse(r);
            } else {
                finished = List.of();
            }
        }
        signal(finished);
    }

    private List<Op> onResponse(Response r) {
        Op op = awaitingReply.poll();
        if (op == null || op.seq != r.seq()) {
            failAll("response " + r.seq() + " does not match the oldest outstanding request "
                    + (op == null ? "(none)" : String.valueOf(op.seq)));
            return drainDone();
        }
        for (Key k : r.keys()) {
            keys.computeIfAbsent(k.regionId(), x -> new ArrayList<>()).removeIf(
                    old -> old.windowOffset() == k.windowOffset());
            keys.get(k.regionId()).add(k);
        }
        if (r.type() == RdmaMessageLayout.RESP_ERROR) {
            op.error = r.exception();
            op.verdict = false;
            op.done = true;
        } else if (op.verdict) {
            op.verdict = false;
            if (covered(op)) {
                op.ready = true; // issued by pump, in order
            } else {
                op.error = new AsymNvmException(ErrorCode.ACCESS_DENIED, "responder allowed region " + op.region
                        + " [" + op.offset + ", " + (op.offset + op.length) + ") but sent no key covering it");
                op.done = true;
            }
        } else {
            op.value1 = r.value1();
            op.value2 = r.value2();
            op.body = r.body();
            if (op.type == RdmaMessageLayout.REQ_FLUSH) {
                counters.persisted(r.value1(), r.value2());
            }
            op.done = true;
        }
        return pump();
    }

    @Override
    public void onFailure(QueuePair ch, String reason) {
        List<Op> finished;
        synchronized (lock) {
            failAll(reason);
            finished = drainDone();
        }
        signal(finished);
    }

    /** Under lock: marks the connection lost and every operation not yet done failed with CONNECTION_LOST. */
    private void failAll(String reason) {
        if (open) {
            open = false;
            lostReason = reason;
        }
        for (Iterator<Op> it = blocked.iterator(); it.hasNext(); ) {
            Op op = it.next();
            op.error = lost();
            op.done = true;
            op.inIssued = true;
            issued.add(op);
            it.remove();
        }
        for (Op op : issued) {
            if (!op.done) {
                op.error = lost();
                op.done = true;
            }
        }
        awaitingReply.clear();
        inFlight.clear();
    }

    private AsymNvmException lost() {
        return new AsymNvmException(ErrorCode.CONNECTION_LOST, "rdma connection to memory node lost: " + lostReason);
    }

    /** Two-sided messages sent so far (diagnostics: READ and WRITE covered by keys send none). */
    long messagesSent() {
        synchronized (lock) {
            return messagesSent;
        }
    }

    /** One-sided work requests posted so far. */
    long oneSidedPosted() {
        synchronized (lock) {
            return nextChunkId;
        }
    }

    @Override
    public FabricCounters counters() {
        return counters;
    }

    @Override
    public boolean isOpen() {
        synchronized (lock) {
            return open;
        }
    }

    @Override
    public void close() {
        List<Op> finished;
        synchronized (lock) {
            if (closed) {
                return;
            }
            closed = true;
            failAll("connection closed");
            finished = drainDone();
        }
        signal(finished);
        channel.closeQuietly();
        releaseStaging.run();
    }
}
