package io.asymnvm.examples.support;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The CPU figures of the benchmarks' JSON: which thread counts as what, and the workers' own CPU and allocation. */
@Timeout(60)
class ThreadCpuTest {

    @Test
    void threadNamesShouldMapToTheirRoles() {
        assertEquals(ThreadCpu.WORKERS, ThreadCpu.role("bench-map-1"));
        assertEquals(ThreadCpu.WORKERS, ThreadCpu.role("bench-puts-0"));
        assertEquals(ThreadCpu.AGENT, ThreadCpu.role("asymnvm-frontend-3"));
        assertEquals(ThreadCpu.REPLAYER, ThreadCpu.role("asymnvm-replayer"));
        assertEquals(ThreadCpu.BACKEND_IO, ThreadCpu.role("asymnvm-nic-worker-7-1"));
        assertEquals(ThreadCpu.OTHER_THREADS, ThreadCpu.role("main"));
        assertEquals(ThreadCpu.JVM_JIT, ThreadCpu.jvmRole("C2 CompilerThre"));
        assertEquals(ThreadCpu.JVM_GC, ThreadCpu.jvmRole("GC Thread#0"));
        assertEquals(ThreadCpu.JVM_GC, ThreadCpu.jvmRole("G1 Conc#0"));
        assertEquals(ThreadCpu.JVM_OTHER, ThreadCpu.jvmRole("VM Thread"));
        assertNull(ThreadCpu.jvmRole("bench-map-0"), "a Java thread is measured by the MX bean, not from /proc");
    }

    @Test
    void benchThreadsShouldReportTheirBodiesCpuAndAllocation() {
        AtomicLong sink = new AtomicLong();
        BenchThreads.Body body = start -> {
            long x = start;
            for (int i = 0; i < 20_000_000; i++) { // bounded work, whatever the machine's speed
                x = x * 6364136223846793005L + 1442695040888963407L;
            }
            byte[][] kept = new byte[64][];
            for (int i = 0; i < kept.length; i++) {
                kept[i] = new byte[16 << 10]; // 1 MiB in all
            }
            sink.addAndGet(x + kept[63].length);
        };
        BenchThreads threads = new BenchThreads();
        threads.run("bench-test-", body, body);
        ThreadCpu.Usage cpu = threads.cpu();
        if (!ThreadCpu.supported()) {
            return; // nothing to measure on this JVM
        }
        long workers = cpu.byRole().get(ThreadCpu.WORKERS);
        assertTrue(workers > 0, "the bodies' CPU: " + cpu);
        assertTrue(cpu.processNanos() < 0 || cpu.processNanos() + ThreadCpu.PROCESS_CPU_SLACK_NANOS >= workers,
                "the process includes them: " + cpu);
        assertTrue(cpu.workerAllocatedBytes() < 0 || cpu.workerAllocatedBytes() >= 2L << 20,
                "two bodies allocated 1 MiB each: " + cpu);
        assertTrue(cpu.microsPerOp(ThreadCpu.WORKERS, 2) > 0);
        assertEquals(-1, cpu.microsPerOp(ThreadCpu.WORKERS, 0), 0.0);
        assertTrue(sink.get() != 0);
    }
}
