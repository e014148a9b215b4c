package io.asymnvm.core.fabric;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.region.PersistentRegion;

import java.nio.ByteBuffer;
import java.util.List;

/**
 * Executes one-sided operations directly on registered memory, the way an RDMA NIC would: no application
 * logic runs for READ, WRITE, CAS or FLUSH. Shared by the {@code local} and {@code tcp} fabrics, so both take
 * the same code path. FLUSH persists every range its session wrote since the previous FLUSH (the emulator's
 * stores go through CPU caches, so the responder must write them back whatever the DDIO setting), unless the
 * node's persistence domain already includes the caches.
 */
public final class EmulatedNic {
    private final RegionTable regions;
    private final ControlHandler control;
    private final boolean persistOnFlush;

    public EmulatedNic(RegionTable regions, ControlHandler control, PersistenceDomain domain) {
        this.regions = regions;
        this.control = control;
        this.persistOnFlush = domain == PersistenceDomain.ADR;
    }

    public RegionTable regions() {
        return regions;
    }

    public byte[] read(NicSession s, int regionId, long offset, int length) {
        s.checkAccess(regionId, false);
        RegionTable.Window w = regions.lookup(regionId);
        long at = w.translate(offset, length);
        return w.backing().read(at, length);
    }

    public void write(NicSession s, int regionId, long offset, ByteBuffer data) {
        s.checkAccess(regionId, true);
        RegionTable.Window w = regions.lookup(regionId);
        int length = data.remaining();
        long at = w.translate(offset, length);
        WriteDurability d = w.durability();
        if (d != null) {
            d.storing(at, length); // before the bytes change: a reader never takes them for the persisted ones
        }
        w.backing().write(at, data);
        if (d != null) {
            d.stored(at, length);
        }
        s.recordWrite(regionId, at, length);
        if (w.onWrite() != null) {
            w.onWrite().run();
        }
    }

    public long compareAndSwap(NicSession s, int regionId, long offset, long expected, long update) {
        s.checkAccess(regionId, true);
        RegionTable.Window w = regions.lookup(regionId);
        long at = w.translate(offset, 8);
        if ((at & 7) != 0) {
            throw new AsymNvmException(ErrorCode.UNALIGNED, "CAS at unaligned offset " + offset + " of region "
                    + regionId);
        }
        PersistentRegion r = w.backing();
        while (true) {
            long current = r.getLongVolatile(at);
            if (current != expected) {
                return current;
            }
            if (r.compareAndSetLong(at, expected, update)) {
                if (w.durability() != null) {
                    w.durability().storing(at, 8); // not a tracked WRITE: the word is never taken for durable
                }
                s.recordWrite(regionId, at, 8);
                return expected;
            }
        }
    }

    /** Persists what the session wrote; returns {bytes persisted, persist calls}. */
    public long[] flush(NicSession s, long stamp, boolean stamped) {
        if (s.isFenced()) {
            s.checkAccess(-1, false);
        }
        List<long[]> dirty = s.drainDirty();
        long bytes = 0;
        long calls = 0;
        if (persistOnFlush) {
            for (long[] range : dirty) {
                RegionTable.Window w = regions.lookup((int) range[0]);
                PersistentRegion r = w.backing();
                WriteDurability d = w.durability();
                long upTo = d == null ? 0 : d.completed();
                // a range the node already persisted after these stores (the replayer, faster than this FLUSH,
                // persisted the redo batch before applying it) is durable: written back once (issue 8 goal 7)
                if (d == null || !d.isDurable(range[1], range[2] - range[1])) {
                    r.persist(range[1], range[2] - range[1]);
                    bytes += range[2] - range[1];
                    calls++;
                }
                if (d != null) {
                    d.flushed(range[1], range[2] - range[1], upTo);
                }
            }
        }
        if (stamped && s.stampRegion() >= 0) {
            RegionTable.Window w = regions.lookup(s.stampRegion());
            long at = w.translate(s.stampOffset(), 8);
            PersistentRegion r = w.backing();
            // FLUSHes of one session can run at once (on the workers): the watermark moves by compare-and-set, so
            // one that read an older value never stores its smaller stamp over a larger one stored meanwhile
            while (true) {
                long durable = r.getLongVolatile(at);
                if (stamp <= durable) {
                    return new long[] {bytes, calls}; // never backwards; nothing new to make durable
                }
                s.stampGuard().admit(durable, stamp); // throws to refuse: the watermark stays where it is
                if (r.compareAndSetLong(at, durable, stamp)) {
                    break;
                }
            }
            if (persistOnFlush) {
                r.persist(at, 8);
                bytes += 8;
                calls++;
            }
        }
        return new long[] {bytes, calls};
    }

    // ---- for transports whose one-sided operations bypass this class (rdma): same checks, same records ----

    /**
     * Checks that {@code s} may access {@code [offset, offset + length)} of a registered region, throwing exactly
     * what {@link #read} or {@link #write} would throw (fenced, not attached, not granted, read-only, unknown region,
     * out of bounds); touches no memory.
     */
    public void checkAccess(NicSession s, int regionId, long offset, long length, boolean write) {
        s.checkAccess(regionId, write);
        regions.lookup(regionId).translate(offset, length);
    }

    /**
     * Records a write a NIC already placed in memory without this class (a one-sided RDMA WRITE), after the same
     * checks as {@link #write}, so the next {@link #flush} persists it and the region's write hook runs.
     */
    public void recordRemoteWrite(NicSession s, int regionId, long offset, int length) {
        s.checkAccess(regionId, true);
        RegionTable.Window w = regions.lookup(regionId);
        long at = w.translate(offset, length);
        WriteDurability d = w.durability();
        if (d != null) { // stored before this call: never counted as durable (its store is not numbered)
            d.storing(at, length);
        }
        s.recordWrite(regionId, at, length);
        if (w.onWrite() != null) {
            w.onWrite().run();
        }
    }

    public byte[] control(NicSession s, byte[] request) {
        return control.handle(s, request);
    }

    public void closed(NicSession s) {
        control.sessionClosed(s);
    }
}
