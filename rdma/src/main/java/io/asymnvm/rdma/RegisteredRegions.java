package io.asymnvm.rdma;

import com.ibm.disni.verbs.IbvMr;
import com.ibm.disni.verbs.IbvPd;
import io.asymnvm.core.fabric.Access;
import io.asymnvm.core.fabric.RegionTable;
import io.asymnvm.core.layout.RegionIds;
import io.asymnvm.core.region.MappedRegion;
import io.asymnvm.rdma.RdmaMessageLayout.Key;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.IntFunction;

/**
 * The responder's memory registrations: every window of the node's {@link RegionTable}, per mapping chunk (a verbs
 * memory region is at most 2 GiB; a mapped PM file is in 1 GiB chunks), with the access its policy allows. A window
 * the policy makes writable is registered twice, read-only and read-write, so a session granted only READ gets an
 * rkey the NIC itself refuses to write through. Registrations of one frontend's windows can be replaced
 * ({@link #rotate}): the old rkeys stop working at the NIC. Thread-safe.
 */
final class RegisteredRegions implements KeySource, AutoCloseable {
    private static final int READ_ONLY = IbvMr.IBV_ACCESS_REMOTE_READ;
    private static final int READ_WRITE = IbvMr.IBV_ACCESS_LOCAL_WRITE | IbvMr.IBV_ACCESS_REMOTE_WRITE
            | IbvMr.IBV_ACCESS_REMOTE_READ;

    /** The default policy: a frontend's semantic and redo rings are written remotely; the heap and control blocks are read. */
    static final IntFunction<Access> DEFAULT_POLICY = id -> {
        int kind = RegionIds.kindOf(id);
        return kind == RegionIds.KIND_SEMANTIC || kind == RegionIds.KIND_REDO ? Access.READ_WRITE : Access.READ;
    };

    private record Registration(RegionTable.Window window, Access max, List<IbvMr> readOnly, List<IbvMr> readWrite,
                                List<Long> windowOffsets) {
    }

    private final IbvPd pd;
    private final IntFunction<Access> policy;
    private final Map<Integer, Registration> byRegion = new HashMap<>();

    RegisteredRegions(IbvPd pd, IntFunction<Access> policy) {
        this.pd = pd;
        this.policy = policy;
    }

    /** Registers every window of {@code table}; a window not backed by a mapped file is refused naming it. */
    synchronized void registerAll(RegionTable table) throws IOException {
        for (RegionTable.Window w : table.windows()) {
            if (!(w.backing() instanceof MappedRegion)) {
                throw new IllegalArgumentException("region " + w.id() + " is backed by " + w.backing().name()
                        + ", not a mapped PM file: it cannot be registered with an RDMA device");
            }
            byRegion.put(w.id(), register(w, policy.apply(w.id())));
        }
    }

    private Registration register(RegionTable.Window w, Access max) throws IOException {
        List<ByteBuffer> slices = ((MappedRegion) w.backing()).slices(w.base(), w.length());
        List<IbvMr> ro = new ArrayList<>();
        List<IbvMr> rw = new ArrayList<>();
        List<Long> offsets = new ArrayList<>();
        long at = 0;
        for (ByteBuffer slice : slices) {
            offsets.add(at);
            ro.add(pd.regMr(slice, READ_ONLY).execute().free().getMr());
            if (max.allowsWrite()) {
                rw.add(pd.regMr(slice, READ_WRITE).execute().free().getMr());
            }
            at += slice.remaining();
        }
        return new Registration(w, max, ro, rw, offsets);
    }

    /**
     * The keys a session granted {@code grant} on {@code regionId} receives, or an empty list if the region is not
     * registered (the ACCESS verdict then reports it). A read-write grant on a region the policy registered
     * read-only yields read-only keys.
     */
    @Override
    public synchronized List<Key> keysFor(int regionId, Access grant) {
        Registration r = byRegion.get(regionId);
        if (r == null) {
            return List.of();
        }
        boolean write = grant.allowsWrite() && r.max().allowsWrite();
        List<IbvMr> mrs = write ? r.readWrite() : r.readOnly();
        List<Key> out = new ArrayList<>(mrs.size());
        for (int i = 0; i < mrs.size(); i++) {
            IbvMr mr = mrs.get(i);
            out.add(new Key(regionId, write ? Access.READ_WRITE : Access.READ, r.windowOffsets().get(i), mr.getAddr(),
                    mr.getLength(), mr.getRkey()));
        }
        return out;
    }

    /** Re-registers every window of {@code frontendId}: rkeys handed out before stop working at the NIC. */
    @Override
    public synchronized void rotate(int frontendId) throws IOException {
        for (Map.Entry<Integer, Registration> e : byRegion.entrySet()) {
            if (RegionIds.frontendOf(e.getKey()) == frontendId) {
                Registration old = e.getValue();
                e.setValue(register(old.window(), old.max()));
                deregister(old);
            }
        }
    }

    private static void deregister(Registration r) {
        for (List<IbvMr> mrs : List.of(r.readOnly(), r.readWrite())) {
            for (IbvMr mr : mrs) {
                try {
                    mr.deregMr().execute().free();
                } catch (IOException | RuntimeException e) {
                    // released with the protection domain
                }
            }
        }
    }

    @Override
    public synchronized void close() {
        for (Registration r : byRegion.values()) {
            deregister(r);
        }
        byRegion.clear();
    }
}
