package io.asymnvm.backend.log;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;

import io.asymnvm.core.fabric.WriteDurability;
import io.asymnvm.core.layout.ControlBlockLayout;
import io.asymnvm.core.layout.ControlBlockLayout.Checkpoint;
import io.asymnvm.core.layout.LogRecordLayout;
import io.asymnvm.core.layout.SemanticRecordLayout;
import io.asymnvm.core.layout.SuperblockLayout.Superblock;
import io.asymnvm.core.region.PersistentRegion;
import io.asymnvm.core.CorruptRecordException;
import io.asymnvm.recovery.log.RingDamage;
import io.asymnvm.recovery.log.RingReader;
import io.asymnvm.recovery.log.RingScanner;

import java.util.Arrays;

/**
 * One frontend's log area on the backend: its control block (replay checkpoint, durable watermark, attach
 * epoch) and its two rings. The replayer is the only writer of the checkpoint; attach is the only writer of
 * the epoch and state words. A damaged record in either ring {@linkplain #quarantine quarantines} this frontend
 * alone.
 */
public final class FrontendLog {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(FrontendLog.class);
    private final int frontendId;
    private final PersistentRegion region;
    private final long controlAt;
    private final RingReader semantic;
    private final RingReader redo;
    private volatile Checkpoint checkpoint;
    private volatile String fault;
    private volatile RingDamage quarantine;
    /**
     * What the NIC's FLUSHes persisted of the frontend's WRITEs into each ring (registered with the rings' windows on
     * a backend; on a mirror nothing is registered, so nothing is known durable and everything is persisted here).
     */
    private final WriteDurability semanticWrites = new WriteDurability();
    private final WriteDurability redoWrites = new WriteDurability();
    /** Where the redo ring's valid records ended at a start after an unclean shutdown (-1: clean start). */
    private volatile long crashTail = -1;
    /**
     * The last transaction of the newest batch the replayer began to store into the heap (0: none since the start);
     * ahead of the checkpoint's {@code appliedTxId} from the first heap store of a batch until its checkpoint.
     */
    private volatile long heapStoredTxId;

    public FrontendLog(int frontendId, PersistentRegion region, Superblock sb) {
        this.frontendId = frontendId;
        this.region = region;
        this.controlAt = sb.controlBlockOf(frontendId);
        this.semantic = new RingReader(region, sb.semRingOf(frontendId), sb.semRingCapacity(),
                LogRecordLayout.TYPE_SEMANTIC, region.name() + " semantic ring of frontend " + frontendId);
        this.redo = new RingReader(region, sb.redoRingOf(frontendId), sb.redoRingCapacity(),
                LogRecordLayout.TYPE_REDO_BATCH, region.name() + " redo ring of frontend " + frontendId);
        this.checkpoint = ControlBlockLayout.newestCheckpoint(controlBlock());
        publish(checkpoint);
    }

    /**
     * Lets remote readers act on {@code cp}, which is durable (see {@link ControlBlockLayout#publishedCheckpoint}):
     * a frontend must not reuse ring space that a crash could still need to replay.
     */
    private void publish(Checkpoint cp) {
        region.putLongVolatile(controlAt + ControlBlockLayout.PUBLISHED_SEQ_OFFSET, cp.seq());
    }

    public int frontendId() {
        return frontendId;
    }

    public byte[] controlBlock() {
        return region.read(controlAt, ControlBlockLayout.READ_LENGTH);
    }

    public Checkpoint checkpoint() {
        return checkpoint;
    }

    /** The durability of the frontend's WRITEs into its semantic ring, for the ring's window registration. */
    public WriteDurability semanticWrites() {
        return semanticWrites;
    }

    /** The durability of the frontend's WRITEs into its redo ring (the replayer skips persisting durable batches). */
    public WriteDurability redoWrites() {
        return redoWrites;
    }

    public RingReader redoReader() {
        return redo;
    }

    public RingReader semanticReader() {
        return semantic;
    }

    /**
     * The backend's own check of a FLUSH stamp (a {@link io.asymnvm.core.fabric.StampGuard}): the semantic ring
     * from the current durable watermark {@code durable} (or the checkpoint's head, if the replayer already
     * applied and released records past it) up to {@code requested} must hold valid records (CRC,
     * position, type) that end exactly at {@code requested}, and those bytes are persisted here, whoever wrote
     * them (a recovering incarnation adopts records an earlier session posted and never flushed). A stamp past
     * what the ring holds is refused with {@code BAD_REQUEST} and the watermark does not move, so no client, by
     * mistake or malice, can leave a ring that is invalid before its watermark. A quarantined frontend's stamps
     * are refused with {@code RING_CORRUPT}: nothing it commits after the damage is acknowledged.
     */
    public void admitWatermark(long durable, long requested) {
        requireNotQuarantined();
        // records before the checkpoint's head are applied (their redo is in the PM image) and may already be
        // overwritten: the replayer can release ring space before the FLUSH that covers it arrives; on a mirror,
        // those before the semantic start reach it as redo
        long start = Math.max(Math.max(durable, checkpoint.semHead()), semanticStart());
        if (requested <= start) {
            return;
        }
        if (requested - start > semantic.capacity()) {
            throw new AsymNvmException(ErrorCode.BAD_REQUEST, "FLUSH stamp " + requested + " of frontend "
                    + frontendId + " refused: more than the ring's " + semantic.capacity() + " bytes past the durable "
                    + "watermark " + start);
        }
        long pos = start;
        while (pos < requested) {
            RingReader.Entry e = semantic.read(pos);
            if (e.kind() == RingReader.Kind.INVALID) {
                throw new AsymNvmException(ErrorCode.BAD_REQUEST, "FLUSH stamp " + requested + " of frontend "
                        + frontendId + " refused: the semantic ring holds valid records only up to position " + pos
                        + " (" + e.reason() + " expected 0x" + Long.toHexString(e.expected()) + ", actual 0x"
                        + Long.toHexString(e.actual()) + ")");
            }
            pos = e.next();
        }
        if (pos != requested) {
            throw new AsymNvmException(ErrorCode.BAD_REQUEST, "FLUSH stamp " + requested + " of frontend "
                    + frontendId + " refused: not at a record boundary (the record there ends at " + pos + ")");
        }
        long from = semantic.offsetOf(start);
        long length = requested - start;
        long first = Math.min(length, semantic.capacity() - (from - semantic.offsetOf(0)));
        persistUnlessFlushed(from, first);
        if (first < length) {
            persistUnlessFlushed(semantic.offsetOf(0), length - first);
        }
    }

    /**
     * Persists semantic-ring bytes unless this FLUSH (or an earlier one) already persisted exactly what is stored
     * there, the usual case: the committing frontend's FLUSH persists the records it wrote just before it admits
     * the stamp, and writing them back a second time is amplification only (issue 8 goal 7). Records written by
     * an earlier session, or by any other path, are persisted here. Behind the watermark they are never asked
     * about again, so their knowledge is released.
     */
    private void persistUnlessFlushed(long at, long length) {
        if (!semanticWrites.isDurable(at, length)) {
            region.persist(at, length);
        }
        semanticWrites.forget(at, length); // the FLUSH that stamps them came first: no later one asks
    }

    /**
     * The replayer is about to store the batch ending with transaction {@code lastTxId} into the heap (replayer
     * thread only). Published before the first store, with a store-store fence, so a reader of the heap that saw
     * any of the batch's bytes and then calls {@link #heapStoredTxId()} (after a load-load fence) sees it.
     */
    public void heapStoring(long lastTxId) {
        heapStoredTxId = lastTxId;
        java.lang.invoke.VarHandle.storeStoreFence();
    }

    /**
     * How far the heap may be ahead of the checkpoint: the last transaction of any batch whose heap stores began,
     * or the checkpoint's {@code appliedTxId} if that is later. A fuzzy copy of the heap (a mirror's image copy)
     * may hold bytes of every transaction up to this value, read after the copy's last heap read; the redo of
     * those beyond the checkpoint is not yet shippable (MirrorShipper: the mirror is in sync only once it applied
     * them).
     */
    public long heapStoredTxId() {
        java.lang.invoke.VarHandle.loadLoadFence();
        return Math.max(heapStoredTxId, checkpoint.appliedTxId());
    }

    /** Atomically advances the checkpoint (double-buffered slot, persisted). Replayer thread only. */
    public void advance(long appliedTxId, long redoHead, long semHead) {
        Checkpoint current = checkpoint;
        Checkpoint next = new Checkpoint(current.seq() + 1, appliedTxId, redoHead, semHead);
        byte[] slot = ControlBlockLayout.encodeSlot(next);
        long at = controlAt + ControlBlockLayout.nextSlotOffset(current);
        region.write(at, slot, 0, slot.length);
        region.persist(at, slot.length);
        checkpoint = next;
        publish(next);
    }

    /** The attach epoch of the latest attach (0 if never attached). */
    public long currentEpoch() {
        return region.getLongVolatile(controlAt + ControlBlockLayout.ATTACH_EPOCH_OFFSET);
    }

    /**
     * The attach epoch while the frontend is attached (also after a crash: it never detached), 0 once it detached
     * or if it never attached; what a mirror needs the frontend's MIRROR_POSTING for (issue 9).
     */
    public long attachedEpoch() {
        return region.getLongVolatile(controlAt + ControlBlockLayout.STATE_OFFSET) == ControlBlockLayout.STATE_ATTACHED
                ? currentEpoch() : 0;
    }

    /**
     * A frontend that adds this node as a mirror at run time (or reconnects to it) re-posts only the records it
     * still retains, from ring position {@code position}: this ring holds its records from there on, and what lies
     * before was released (the backend applied it and ships it as redo; this mirror's replay may not have reached
     * it yet). Stored as the {@linkplain #semanticStart semantic start}, where the FLUSH watermark check and the
     * attach's scan begin, and as the durable watermark. Neither moves back; more than the ring's capacity past the
     * checkpoint's head is refused with BAD_REQUEST naming both.
     *
     * <p>The start is persisted before the watermark: a crash between them leaves a watermark behind the start,
     * which claims nothing. Before the start existed, the watermark alone was raised, and an attach in the window
     * until the replay reached {@code position} (an add undone after its re-post and repeated at once, a reconnect,
     * a restart) scanned from the checkpoint's head to the watermark, found the records this mirror never holds
     * and quarantined the frontend (RING_CORRUPT) for good.
     */
    public synchronized void adoptSemanticStart(long position) {
        long at = controlAt + ControlBlockLayout.DURABLE_SEM_TAIL_OFFSET;
        long durable = region.getLongVolatile(at);
        long start = semanticStart();
        if (position <= durable && position <= start) {
            return;
        }
        if (position - checkpoint.semHead() > semantic.capacity()) {
            throw new AsymNvmException(ErrorCode.BAD_REQUEST, "semantic start " + position + " of frontend "
                    + frontendId + " is more than the ring's " + semantic.capacity() + " bytes past its head "
                    + checkpoint.semHead());
        }
        if (position > start) {
            long startAt = controlAt + ControlBlockLayout.MIRROR_SEM_START_OFFSET;
            region.putLongVolatile(startAt, position);
            region.persist(startAt, 8);
        }
        if (position > durable) {
            region.putLongVolatile(at, position);
            region.persist(at, 8);
        }
    }

    /**
     * Where this ring holds the frontend's records from, as a frontend that added this mirror at run time last
     * stated ({@link #adoptSemanticStart}); 0 on a backend. Records before it, past the checkpoint's head, are no
     * damage when missing: the mirror applies them from the redo its backend ships.
     */
    public long semanticStart() {
        return region.getLongVolatile(controlAt + ControlBlockLayout.MIRROR_SEM_START_OFFSET);
    }

    /**
     * A mirror being promoted (its replay finished, in sync, so its head is at or past the semantic start): from
     * now on every record past the head must be in the ring, as on any backend.
     */
    public synchronized void dropSemanticStart() {
        long at = controlAt + ControlBlockLayout.MIRROR_SEM_START_OFFSET;
        if (region.getLongVolatile(at) != 0) {
            region.putLongVolatile(at, 0);
            region.persist(at, 8);
        }
    }

    /** Increments and persists the attach epoch, marks the frontend attached; returns the new epoch. */
    public synchronized long beginAttach() {
        long epoch = region.getLongVolatile(controlAt + ControlBlockLayout.ATTACH_EPOCH_OFFSET) + 1;
        region.putLongVolatile(controlAt + ControlBlockLayout.ATTACH_EPOCH_OFFSET, epoch);
        region.putLongVolatile(controlAt + ControlBlockLayout.STATE_OFFSET, ControlBlockLayout.STATE_ATTACHED);
        region.persist(controlAt + ControlBlockLayout.ATTACH_EPOCH_OFFSET, 16);
        return epoch;
    }

    public void markDetached() {
        region.putLongVolatile(controlAt + ControlBlockLayout.STATE_OFFSET, ControlBlockLayout.STATE_DETACHED);
        region.persist(controlAt + ControlBlockLayout.STATE_OFFSET, 8);
    }

    /**
     * Semantic records after the checkpoint (on a mirror: from its semantic start, if its replay has not reached
     * it), up to the valid tail. A damaged record before the durable watermark quarantines this frontend and fails
     * with {@code RING_CORRUPT} (ring, offset, expected, actual).
     */
    public SemanticTail scanSemantic() {
        requireNotQuarantined();
        Checkpoint cp = checkpoint;
        byte[] block = controlBlock();
        long durable = ControlBlockLayout.durableSemTail(block);
        RingScanner.Scan scan;
        try {
            scan = RingScanner.scan(semantic, Math.max(cp.semHead(), ControlBlockLayout.mirrorSemStart(block)),
                    durable, null);
        } catch (CorruptRecordException e) {
            quarantine(RingDamage.of(e));
            throw quarantine.refusal(frontendId);
        }
        long lastTx = scan.lastRecord() == null ? cp.appliedTxId() : SemanticRecordLayout.txId(scan.lastRecord());
        return new SemanticTail(scan.tail(), scan.records(), lastTx);
    }

    /**
     * Destroys the stale records an earlier session left past the rings' valid tails, before a newly attached
     * session writes there (attach only, after replay drained and the tails were scanned): every 64-byte slot
     * of the free part of a ring, {@code [tail, head + capacity)}, whose header claims the logical position of
     * that slot gets an impossible position word, persisted. Returns how many slots were invalidated.
     *
     * <p>Why: a crash (power cut, or a frontend dying mid-WRITE) can leave a torn record followed by whole ones
     * of the same lap. The new session resumes writing at the torn one, and its records need not have the old
     * ones' lengths, but where one of its records ends exactly where a stale whole one begins, that stale record
     * validates (CRC, type, position all match) before the session writes over it: the replayer applied a
     * crashed session's redo batch whose transaction id continued the sequence ahead of the frontend (and with
     * other contents if that id now names another transaction), and a later recovery would re-execute a crashed
     * session's semantic record. Slots of the previous lap carry other positions and are left alone, so after a
     * clean stop nothing is written.
     *
     * <p>Persist-once: these stores do not go through the NIC, so the rings' {@link WriteDurability} never hears of
     * them and may still remember an earlier session's WRITE of the same bytes as persisted. That knowledge stays
     * true: each word is persisted here before the attach reply, and whatever a session writes there later is a
     * new NIC WRITE, which makes its range not durable until a FLUSH or the replayer persists it.
     */
    public int invalidateStaleRecords(long semTail, long redoTail) {
        return invalidateStaleSemanticRecords(semTail)
                + invalidateStale(redo, redoTail, checkpoint.redoHead() + redo.capacity());
    }

    /**
     * The semantic ring's part of {@link #invalidateStaleRecords}, for a SYNC mirror: the attaching frontend
     * writes its semantic ring there too, and a promotion would otherwise take a stale record for one of its own.
     * (A mirror's redo ring is written by its backend's shipper only, and replayed only as far as shipped.)
     */
    public int invalidateStaleSemanticRecords(long semTail) {
        return invalidateStale(semantic, semTail, checkpoint.semHead() + semantic.capacity());
    }

    private int invalidateStale(RingReader ring, long tail, long end) {
        int invalidated = 0;
        long[] starts = new long[8];
        long[] ends = new long[8];
        // the record at the tail is invalid by definition (the scan stopped there), and a blank ring's zero words
        // match only position 0: start after it
        for (long p = LogRecordLayout.alignUp(tail) + LogRecordLayout.ALIGNMENT; p < end;
                p += LogRecordLayout.ALIGNMENT) {
            long word = ring.offsetOf(p) + LogRecordLayout.POSITION_OFFSET;
            if (region.getLong(word) == p) {
                region.putLong(word, LogRecordLayout.NO_POSITION);
                if (invalidated == starts.length) {
                    starts = Arrays.copyOf(starts, 2 * invalidated);
                    ends = Arrays.copyOf(ends, 2 * invalidated);
                }
                starts[invalidated] = word;
                ends[invalidated] = word + 8;
                invalidated++;
            }
        }
        // each word is independent of the others and all must be durable before the attach goes on: one call, so
        // a file pays one write-back for them all instead of one per slot
        if (invalidated > 0) {
            region.persistRanges(starts, ends, invalidated);
            LOG.info("frontend {}: invalidated {} stale records past the valid tail {} of {}", frontendId,
                    invalidated, tail, ring.name());
        }
        return invalidated;
    }

    /** The semantic ring's valid tail, how many records lie after the checkpoint, and the last one's tx id. */
    public record SemanticTail(long tail, long records, long lastTxId) {
    }

    /** Stops replay for this frontend (a batch that is structurally valid but not allowed). */
    public void fault(String reason) {
        this.fault = reason;
    }

    public String fault() {
        return fault;
    }

    /**
     * Quarantines this frontend for a damaged record in one of its rings (the first damage found is kept): replay
     * stops for it, its attach is refused with {@code RING_CORRUPT}, and nothing of its rings is truncated or
     * rewritten. Every other frontend is unaffected.
     */
    public synchronized void quarantine(RingDamage damage) {
        if (quarantine == null) {
            quarantine = damage;
            LOG.error("frontend {} quarantined: damaged record in {}; its rings are kept as they are, every other "
                    + "frontend is served", frontendId, damage.describe());
        }
    }

    /** The damage that quarantined this frontend, or null. */
    public RingDamage quarantine() {
        return quarantine;
    }

    /** Throws {@code RING_CORRUPT} naming ring, offset, expected and actual values if quarantined. */
    public void requireNotQuarantined() {
        RingDamage q = quarantine;
        if (q != null) {
            throw q.refusal(frontendId);
        }
    }

    /**
     * The start-up check of the rings: a damaged semantic record quarantines this frontend (logged) instead of
     * failing the backend's start; returns the semantic tail, or null when quarantined. After an unclean shutdown
     * the redo ring's first invalid position is remembered as {@link #crashTail()}: a power failure may keep a
     * later batch and tear an earlier one, which is a torn tail, not damage. (Damage elsewhere in the redo ring is
     * found by the replayer.)
     */
    public SemanticTail scanAtStart(boolean previousShutdownClean) {
        if (!previousShutdownClean) {
            crashTail = RingScanner.scan(redo, checkpoint.redoHead(), checkpoint.redoHead(), null).tail();
        }
        return scanAtStart();
    }

    /**
     * The redo position at which a start after an unclean shutdown found the ring's valid records to end (-1
     * after a clean one): an invalid batch there is a crash's torn tail, never damage.
     */
    public long crashTail() {
        return crashTail;
    }

    /**
     * Whether an invalid redo record at {@code position} is what an unclean shutdown left behind rather than damage:
     * after such a start, the positions from {@link #crashTail()} for one ring lap hold the crashed session's bytes
     * (torn or whole, in whatever order its persists reached the media) until the recovering frontend writes there
     * again, and the replayer can reach a position before the frontend's next WRITE of it. A torn record there
     * followed by a stale whole one is therefore not damage: the replayer waits for the rewrite. (Only the first
     * position was excused before; a power cut during a recovery then left a stale torn record after the new
     * batches, taken for damage: PowerFailureTest with -Dasymnvm.powerFailure.redoBatchTransactions=2.) Beyond that
     * lap, where the recovering frontend has written everything again, the ordinary rule holds.
     */
    public boolean leftByCrash(long position) {
        long t = crashTail;
        return t >= 0 && position >= t && position - t < redo.capacity();
    }

    private SemanticTail scanAtStart() {
        try {
            return scanSemantic();
        } catch (AsymNvmException e) {
            if (e.errorCode() != ErrorCode.RING_CORRUPT) {
                throw e;
            }
            return null;
        }
    }
}
