package io.asymnvm.system;

import io.asymnvm.recovery.crash.SimulatedPmRegion;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * Simulated PM that also counts its completed persist calls by the role of the thread that made them (the tcp
 * emulated NIC's event loops, its worker pool and persist lanes, the replayer, anything else): shows which
 * threads a power-failure exploration can cut the power in.
 */
final class ThreadCountingPmRegion extends SimulatedPmRegion {
    /** A Netty event loop of the emulated NIC (a FLUSH run inline, a READ, WRITE or CAS). */
    static final String EVENT_LOOP = "tcp event loop";
    /** The emulated NIC's worker pool: control calls, and FLUSH when it is not run inline. */
    static final String NIC_WORKER = "tcp nic worker";
    /** A persist lane of the emulated NIC ({@code -Dasymnvm.nic.flush=lane}). */
    static final String PERSIST_LANE = "tcp persist lane";
    static final String REPLAYER = "replayer";
    static final String OTHER = "other";

    private final Map<String, LongAdder> persists = new ConcurrentHashMap<>();

    ThreadCountingPmRegion(String name, int size) {
        super(name, size);
    }

    @Override
    public void persist(long offset, long length) {
        super.persist(offset, length);
        persists.computeIfAbsent(roleOf(Thread.currentThread().getName()), r -> new LongAdder()).increment();
    }

    /** Completed persist calls by thread role. */
    Map<String, Long> persistsByRole() {
        Map<String, Long> out = new TreeMap<>();
        persists.forEach((role, n) -> out.put(role, n.sum()));
        return out;
    }

    /** Completed persist calls made by the threads of the tcp emulated NIC. */
    long tcpServerPersists() {
        return persistsByRole().entrySet().stream().filter(e -> isTcpServer(e.getKey()))
                .mapToLong(Map.Entry::getValue).sum();
    }

    static boolean isTcpServer(String role) {
        return role.equals(EVENT_LOOP) || role.equals(NIC_WORKER) || role.equals(PERSIST_LANE);
    }

    /**
     * The role of a thread by its name: Netty names its event-loop threads after the group class
     * ({@code multiThreadIoEventLoopGroup-N-M}; the frontend's reply-reading loops persist nothing), the emulated
     * NIC names its workers and lanes ({@code TcpNicServer}, {@code NicPipeline}).
     */
    static String roleOf(String thread) {
        if (thread.startsWith("asymnvm-nic-worker")) {
            return NIC_WORKER;
        }
        if (thread.startsWith("nic-persist-")) {
            return PERSIST_LANE;
        }
        if (thread.contains("EventLoopGroup")) {
            return EVENT_LOOP;
        }
        if (thread.startsWith("asymnvm-replayer")) {
            return REPLAYER;
        }
        return OTHER;
    }
}
