package io.asymnvm.core.fabric;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.region.PersistentRegion;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The memory a node registers for one-sided access: region id (rkey) to a window of a persistent region.
 * Thread-safe; registration usually happens once at start.
 */
public final class RegionTable {

    /**
     * A registered window {@code [base, base + length)} of {@code backing}; {@code durability} (may be null) is told
     * what WRITEs stored and FLUSHes persisted in it.
     */
    public record Window(int id, PersistentRegion backing, long base, long length, Runnable onWrite,
                         WriteDurability durability) {
        /** Translates and bounds-checks a window-relative range to a backing offset. */
        long translate(long offset, long len) {
            if (offset < 0 || len < 0 || offset > length - len) {
                throw new AsymNvmException(ErrorCode.OUT_OF_BOUNDS, "range [" + offset + ", " + (offset + len)
                        + ") outside region " + id + " of length " + length);
            }
            return base + offset;
        }
    }

    private final Map<Integer, Window> windows = new ConcurrentHashMap<>();

    public void register(int id, PersistentRegion backing, long base, long length, Runnable onWrite) {
        register(id, backing, base, length, onWrite, null);
    }

    /** As {@link #register(int, PersistentRegion, long, long, Runnable)}, tracking WRITEs in {@code durability}. */
    public void register(int id, PersistentRegion backing, long base, long length, Runnable onWrite,
                         WriteDurability durability) {
        if (base < 0 || length <= 0 || base > backing.size() - length) {
            throw new IllegalArgumentException("window [" + base + ", " + (base + length) + ") outside "
                    + backing.name() + " of size " + backing.size());
        }
        if (windows.putIfAbsent(id, new Window(id, backing, base, length, onWrite, durability)) != null) {
            throw new IllegalStateException("region id already registered: " + id);
        }
    }

    /** Every registered window (a snapshot; rdma registers each with the NIC). */
    public java.util.List<Window> windows() {
        return java.util.List.copyOf(windows.values());
    }

    public Window lookup(int id) {
        Window w = windows.get(id);
        if (w == null) {
            throw new AsymNvmException(ErrorCode.UNKNOWN_REGION, "unknown region id " + id);
        }
        return w;
    }
}
