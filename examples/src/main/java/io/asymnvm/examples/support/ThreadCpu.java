package io.asymnvm.examples.support;

import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * CPU time of one measured phase by role, the figure a loaded machine does not distort (throughput there depends on
 * how much CPU the process is given; CPU per operation does not): the benchmark threads' own CPU (each reads its
 * thread's clock when its body ends, see {@link BenchThreads}), and, from a snapshot of every live thread before and
 * after the phase, the frontend's agent ({@code asymnvm-frontend-*}, the redo shipper and checkpoint poller), the
 * backend's replayer ({@code asymnvm-replayer}) and the backend's I/O threads. {@code process} is the whole JVM's
 * CPU (JIT compiler and GC threads included), so {@code process} minus the roles is what no named thread accounts
 * for. On Linux the JVM's own threads are read from /proc (10 ms ticks): garbage collection ({@code jvm_gc}, what
 * the workers' allocation, also reported, costs), JIT compilation ({@code jvm_jit}) and the VM thread. Times are
 * nanoseconds; -1 where the JVM cannot measure thread CPU.
 */
public final class ThreadCpu {
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    /** The roles reported, in order; {@link #role} maps a thread name to one of them. */
    public static final String WORKERS = "workers";
    public static final String AGENT = "frontend_agent";
    public static final String REPLAYER = "backend_replayer";
    public static final String BACKEND_IO = "backend_io";
    public static final String OTHER_THREADS = "other_threads";

    /** The JVM's own threads, seen only in /proc on Linux: garbage collection, JIT compilation, the rest. */
    public static final String JVM_GC = "jvm_gc";
    public static final String JVM_JIT = "jvm_jit";
    public static final String JVM_OTHER = "jvm_other";
    /** /proc/[pid]/task/[tid]/stat counts CPU in clock ticks of 10 ms (USER_HZ, 100 on Linux). */
    private static final long NANOS_PER_TICK = 10_000_000L;
    /**
     * How far the process's CPU over a phase ({@link Usage#processNanos}) may fall below the sum of its threads' CPU
     * by measurement alone: on Linux the JVM reads the process's CPU in clock ticks, and a difference of two floored
     * tick counts (user and system time each) can be up to two ticks short, while a thread's CPU is read in
     * nanoseconds (seen in CI: a 70 ms process against 71.5 ms of worker threads).
     */
    public static final long PROCESS_CPU_SLACK_NANOS = 2 * NANOS_PER_TICK;
    private static final Path TASKS = Path.of("/proc/self/task");

    private final Map<Long, Long> threadsBefore;
    private final Map<Long, String> namesBefore;
    private final long processBefore;
    /** The JVM's own threads by task id (their CPU in nanoseconds, at tick resolution) and role. */
    private final Map<Long, Long> tasksBefore;
    private final Map<Long, String> taskRoles;

    private ThreadCpu(Map<Long, Long> threads, Map<Long, String> names, long process, Map<Long, Long> tasks,
                      Map<Long, String> taskRoles) {
        this.threadsBefore = threads;
        this.namesBefore = names;
        this.processBefore = process;
        this.tasksBefore = tasks;
        this.taskRoles = taskRoles;
    }

    /** Whether the JVM measures per-thread CPU time (then it is switched on by the first snapshot). */
    public static boolean supported() {
        return THREADS.isThreadCpuTimeSupported();
    }

    /** The calling thread's CPU time so far, in nanoseconds, or -1. */
    public static long currentThreadNanos() {
        return supported() ? THREADS.getCurrentThreadCpuTime() : -1;
    }

    /** Bytes the calling thread allocated so far, or -1 where the JVM does not count them. */
    public static long currentThreadAllocatedBytes() {
        if (THREADS instanceof com.sun.management.ThreadMXBean sun && sun.isThreadAllocatedMemorySupported()) {
            if (!sun.isThreadAllocatedMemoryEnabled()) {
                sun.setThreadAllocatedMemoryEnabled(true);
            }
            return sun.getCurrentThreadAllocatedBytes();
        }
        return -1;
    }

    /** A snapshot of every live thread's CPU time and of the process's. */
    public static ThreadCpu snapshot() {
        Map<Long, Long> cpu = new HashMap<>();
        Map<Long, String> names = new HashMap<>();
        if (supported()) {
            if (!THREADS.isThreadCpuTimeEnabled()) {
                THREADS.setThreadCpuTimeEnabled(true);
            }
            long[] ids = THREADS.getAllThreadIds();
            ThreadInfo[] infos = THREADS.getThreadInfo(ids);
            for (int i = 0; i < ids.length; i++) {
                long t = THREADS.getThreadCpuTime(ids[i]);
                if (t >= 0 && infos[i] != null) {
                    cpu.put(ids[i], t);
                    names.put(ids[i], infos[i].getThreadName());
                }
            }
        }
        Map<Long, Long> tasks = new HashMap<>();
        Map<Long, String> roles = new HashMap<>();
        readJvmTasks(tasks, roles);
        return new ThreadCpu(cpu, names, processNanos(), tasks, roles);
    }

    /**
     * The JVM's own threads from /proc (Linux): each task's name ({@code comm}) and its user + system ticks. Only
     * GC, JIT and other VM threads are kept (Java threads are measured by the thread MX bean); nothing elsewhere.
     */
    private static void readJvmTasks(Map<Long, Long> cpu, Map<Long, String> roles) {
        if (!Files.isDirectory(TASKS)) {
            return;
        }
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(TASKS)) {
            for (Path task : tasks) {
                String stat;
                try {
                    stat = Files.readString(task.resolve("stat"));
                } catch (IOException ended) {
                    continue; // the thread ended meanwhile
                }
                int open = stat.indexOf('(');
                int close = stat.lastIndexOf(')');
                if (open < 0 || close < open) {
                    continue;
                }
                String role = jvmRole(stat.substring(open + 1, close));
                if (role == null) {
                    continue;
                }
                // after "comm)": state is field 3, utime field 14 and stime field 15 (1-based)
                String[] fields = stat.substring(close + 2).split(" ");
                if (fields.length < 13) {
                    continue;
                }
                long ticks = Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
                long id = Long.parseLong(task.getFileName().toString());
                cpu.put(id, ticks * NANOS_PER_TICK);
                roles.put(id, role);
            }
        } catch (IOException | RuntimeException unreadable) {
            cpu.clear(); // not the Linux layout: report no JVM-thread roles rather than wrong ones
            roles.clear();
        }
    }

    /** The role of a JVM-internal thread by its task name (15 characters at most), or null for a Java thread. */
    static String jvmRole(String comm) {
        if (comm.startsWith("GC Thread") || comm.startsWith("G1 ")) {
            return JVM_GC;
        }
        if (comm.startsWith("C1 CompilerThre") || comm.startsWith("C2 CompilerThre")) {
            return JVM_JIT;
        }
        if (comm.equals("VM Thread") || comm.startsWith("VM Periodic")) {
            return JVM_OTHER;
        }
        return null;
    }

    /** The role of a thread by its name (benchmark threads are named {@code bench-*}). */
    static String role(String name) {
        if (name.startsWith("bench-")) {
            return WORKERS;
        }
        if (name.startsWith("asymnvm-frontend")) {
            return AGENT;
        }
        if (name.startsWith("asymnvm-replayer")) {
            return REPLAYER;
        }
        if (name.startsWith("asymnvm-nic") || name.startsWith("nic-persist") || name.contains("nioEventLoop")
                || name.startsWith("epoll")) {
            return BACKEND_IO;
        }
        return OTHER_THREADS;
    }

    /**
     * The CPU each role used since this snapshot; {@code workerNanos} is what the (ended) benchmark threads
     * measured of themselves. Threads that started and ended within the phase are not seen, except the workers.
     */
    public Usage since(long workerNanos, long workerAllocatedBytes) {
        ThreadCpu now = snapshot();
        Map<String, Long> byRole = new LinkedHashMap<>();
        for (String r : new String[] {WORKERS, AGENT, REPLAYER, BACKEND_IO, OTHER_THREADS, JVM_GC, JVM_JIT,
                JVM_OTHER}) {
            byRole.put(r, 0L);
        }
        byRole.put(WORKERS, workerNanos);
        for (Map.Entry<Long, Long> e : now.threadsBefore.entrySet()) {
            String name = now.namesBefore.get(e.getKey());
            String role = role(name);
            if (role.equals(WORKERS)) {
                continue; // measured by the workers themselves (a snapshot sees them only while they run)
            }
            long before = threadsBefore.getOrDefault(e.getKey(), 0L);
            byRole.merge(role, Math.max(0, e.getValue() - before), Long::sum);
        }
        for (Map.Entry<Long, Long> e : now.tasksBefore.entrySet()) {
            long before = tasksBefore.getOrDefault(e.getKey(), 0L);
            byRole.merge(now.taskRoles.get(e.getKey()), Math.max(0, e.getValue() - before), Long::sum);
        }
        long process = processBefore < 0 || now.processBefore < 0 ? -1 : now.processBefore - processBefore;
        return new Usage(byRole, process, supported(), workerAllocatedBytes);
    }

    private static long processNanos() {
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
            return os.getProcessCpuTime();
        }
        return -1;
    }

    /** CPU nanoseconds by role over a phase, and the process's. */
    public record Usage(Map<String, Long> byRole, long processNanos, boolean measured, long workerAllocatedBytes) {
        /** Nothing measured (an empty phase, or a JVM without thread CPU time). */
        public static final Usage NONE = new Usage(Map.of(), -1, false, -1);

        /** CPU microseconds per operation of role {@code role} (the process's for "process"), or -1. */
        public double microsPerOp(String role, long ops) {
            long nanos = "process".equals(role) ? processNanos : byRole.getOrDefault(role, -1L);
            return !measured || ops <= 0 || nanos < 0 ? -1 : nanos / 1000.0 / ops;
        }

        /** Adds this usage as {@code prefix + role + "_us_per_op"} keys (and the process's) to a JSON object. */
        public ObjectNode putPerOp(ObjectNode json, String prefix, long ops) {
            json.put(prefix + "process_us_per_op", Json.decimal(microsPerOp("process", ops), 3));
            for (String role : byRole.keySet()) {
                json.put(prefix + role + "_us_per_op", Json.decimal(microsPerOp(role, ops), 3));
            }
            json.put(prefix + "workers_alloc_bytes_per_op", Json.decimal(ops <= 0 || workerAllocatedBytes < 0 ? -1
                    : workerAllocatedBytes / (double) ops, 1));
            return json;
        }
    }
}
