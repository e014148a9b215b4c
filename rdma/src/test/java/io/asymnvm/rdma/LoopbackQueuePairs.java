package io.asymnvm.rdma;

import io.asymnvm.core.fabric.Access;
import io.asymnvm.core.fabric.RegionTable;
import io.asymnvm.core.layout.RegionIds;
import io.asymnvm.rdma.RdmaMessageLayout.Key;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;

/**
 * A software stand-in for a device, to run the rdma fabric's logic ({@link RdmaConnection}, {@link RdmaSession})
 * where there is none: queue-pair ends joined by one "wire" thread that delivers SENDs and executes one-sided
 * READ/WRITE on the responder's memory in posting order (as a reliable connection does), with memory regions
 * that have rkeys, bounds and access flags the "NIC" enforces, and that {@link #rotate} invalidates. It does not
 * model what only hardware does (reordering of a READ and a later SEND, DDIO, RNR), which is what
 * {@link RdmaFabricContractTest} on a device is for.
 */
final class LoopbackQueuePairs implements KeySource, AutoCloseable {

    private record Mr(RegionTable.Window window, long windowOffset, int length, long remoteBase, boolean write) {
    }

    /** A window's rkeys, read-only and (if the policy allows) read-write, one per segment. */
    private record Registration(List<Integer> readOnly, List<Integer> readWrite) {
    }

    private final RegionTable table;
    private final IntFunction<Access> policy;
    private final int segment;
    private final Map<Integer, Mr> byRkey = new ConcurrentHashMap<>();
    private final Map<Integer, Registration> byRegion = new ConcurrentHashMap<>();
    private final AtomicInteger nextRkey = new AtomicInteger(0x100);
    private long nextBase = 1L << 40;
    private final ExecutorService wire = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "loopback-rdma-wire");
        t.setDaemon(true);
        return t;
    });

    /** Registers every window of {@code table} in {@code segment}-byte memory regions (so transfers cross keys). */
    LoopbackQueuePairs(RegionTable table, IntFunction<Access> policy, int segment) {
        this.table = table;
        this.policy = policy;
        this.segment = segment;
        for (RegionTable.Window w : table.windows()) {
            register(w);
        }
    }

    private synchronized void register(RegionTable.Window w) {
        boolean writable = policy.apply(w.id()).allowsWrite();
        List<Integer> ro = new ArrayList<>();
        List<Integer> rw = new ArrayList<>();
        for (long at = 0; at < w.length(); at += segment) {
            int len = (int) Math.min(segment, w.length() - at);
            ro.add(mr(w, at, len, false));
            if (writable) {
                rw.add(mr(w, at, len, true));
            }
        }
        byRegion.put(w.id(), new Registration(ro, rw));
    }

    private int mr(RegionTable.Window w, long at, int len, boolean write) {
        int rkey = nextRkey.getAndIncrement();
        byRkey.put(rkey, new Mr(w, at, len, nextBase, write));
        nextBase += 1L << 32;
        return rkey;
    }

    @Override
    public synchronized List<Key> keysFor(int regionId, Access grant) {
        Registration r = byRegion.get(regionId);
        if (r == null) {
            return List.of();
        }
        boolean write = grant.allowsWrite() && !r.readWrite().isEmpty();
        List<Key> out = new ArrayList<>();
        for (int rkey : write ? r.readWrite() : r.readOnly()) {
            Mr mr = byRkey.get(rkey);
            out.add(new Key(regionId, write ? Access.READ_WRITE : Access.READ, mr.windowOffset(), mr.remoteBase(),
                    mr.length(), rkey));
        }
        return out;
    }

    @Override
    public synchronized void rotate(int frontendId) {
        for (RegionTable.Window w : table.windows()) {
            if (RegionIds.frontendOf(w.id()) == frontendId || frontendId == ROTATE_ALL) {
                Registration old = byRegion.get(w.id());
                old.readOnly().forEach(byRkey::remove);
                old.readWrite().forEach(byRkey::remove);
                register(w);
            }
        }
    }

    /** {@link #rotate} of every region (the contract's regions belong to no frontend by {@link RegionIds}). */
    static final int ROTATE_ALL = Integer.MIN_VALUE;

    /**
     * A fabric whose connections are {@link RdmaConnection}s joined to {@link RdmaSession}s of {@code nic} by this
     * link; {@code keys} is what the sessions use (this link, or an adapter of it).
     */
    io.asymnvm.core.fabric.Fabric fabric(io.asymnvm.core.fabric.EmulatedNic nic, KeySource keys, RdmaOptions options) {
        Map<Integer, RdmaSession> frontends = new ConcurrentHashMap<>();
        long stagingBase = 0x7000_0000_0000L;
        return new io.asymnvm.core.fabric.Fabric() {
            @Override
            public String name() {
                return "rdma";
            }

            @Override
            public io.asymnvm.core.fabric.FabricConnection connect() {
                ByteBuffer staging = ByteBuffer.allocateDirect((int) options.maxTransfer());
                End[] ends = LoopbackQueuePairs.this.connect(staging, stagingBase);
                ends[1].listen(new RdmaSession(nic, keys, frontends, ends[1]));
                RdmaConnection c = new RdmaConnection(ends[0], options, staging, stagingBase, 1, () -> {
                });
                ends[0].listen(c);
                return c;
            }

            @Override
            public void close() {
            }
        };
    }

    /** A connected pair: {@code client} with local memory {@code staging} at {@code stagingBase}. */
    End[] connect(ByteBuffer staging, long stagingBase) {
        End client = new End(staging, stagingBase);
        End server = new End(null, 0);
        client.peer = server;
        server.peer = client;
        return new End[] {client, server};
    }

    private void onWire(Runnable r) {
        try {
            wire.execute(r);
        } catch (RejectedExecutionException e) {
            // the link is shut down: nothing more is delivered
        }
    }

    @Override
    public void close() {
        wire.shutdownNow();
    }

    /** One end of a queue pair. */
    final class End implements QueuePair {
        private final ByteBuffer memory;
        private final long memoryBase;
        private End peer;
        private volatile Listener listener;
        private String failure;

        End(ByteBuffer memory, long memoryBase) {
            this.memory = memory;
            this.memoryBase = memoryBase;
        }

        @Override
        public void send(byte[] message, int length, boolean fence) {
            byte[] copy = java.util.Arrays.copyOf(message, length);
            onWire(() -> {
                if (failure == null && peer.failure == null) {
                    peer.listener.onMessage(peer, ByteBuffer.wrap(copy), length);
                }
            });
        }

        @Override
        public void postOneSided(boolean write, long localAddress, int lkey, int length, long remoteAddress, int rkey,
                                 long id) {
            onWire(() -> {
                if (failure != null) {
                    return;
                }
                Mr mr = byRkey.get(rkey);
                String error = mr == null ? "invalid rkey " + rkey
                        : write && !mr.write() ? "rkey " + rkey + " is not registered for remote write"
                        : remoteAddress < mr.remoteBase() || remoteAddress - mr.remoteBase() > mr.length() - length
                        ? "remote range outside the memory region of rkey " + rkey : null;
                if (error != null) {
                    fail("work request " + id + " failed with IBV_WC_REM_ACCESS_ERR (" + error + ")");
                    peer.fail("queue pair error");
                    return;
                }
                long at = mr.window().base() + mr.windowOffset() + (remoteAddress - mr.remoteBase());
                ByteBuffer local = memory.duplicate();
                local.position((int) (localAddress - memoryBase)).limit((int) (localAddress - memoryBase) + length);
                if (write) {
                    mr.window().backing().write(at, local);
                } else {
                    mr.window().backing().read(at, local);
                }
                listener.onOneSided(this, id);
            });
        }

        @Override
        public void listen(Listener l) {
            listener = l;
        }

        @Override
        public synchronized void fail(String reason) {
            if (failure == null) {
                failure = reason;
                Listener l = listener;
                if (l != null) {
                    l.onFailure(this, reason);
                }
            }
        }

        @Override
        public void closeQuietly() {
            fail("closed");
            onWire(() -> peer.fail("disconnected by the peer"));
        }
    }
}
