package io.asymnvm.examples.cli;

import io.asymnvm.examples.support.ThreadCpu;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.StringWriter;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(60)
class MapBenchCommandTest {
    private static final List<String> KEYS = List.of("ops_per_s", "p50_us", "p99_us", "baseline_ops_per_s", "ratio",
            "runs_per_tx", "runs_per_tx_p50", "runs_per_tx_p99", "runs_per_tx_max", "fetch_reads",
            "lockless_attempts", "lockless_conflicts", "lockless_fallbacks", "optimistic_attempts",
            "optimistic_conflicts", "optimistic_fallbacks", "conflicts_per_tx", "commit_lock_hold_us",
            "commit_lock_wait_us", "commit_lock_busy", "cpu_process_us_per_op", "cpu_workers_us_per_op", "cpu_frontend_agent_us_per_op",
            "cpu_backend_replayer_us_per_op", "cpu_backend_io_us_per_op", "cpu_other_threads_us_per_op",
            "cpu_jvm_gc_us_per_op", "cpu_jvm_jit_us_per_op", "cpu_jvm_other_us_per_op",
            "cpu_workers_alloc_bytes_per_op");

    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    private int execute(String... args) {
        return CliFixture.execute(out, err, args);
    }

    @ParameterizedTest
    @CsvSource({"btree, local, a", "hash, local, a", "btree, local, c", "hash, tcp, b"})
    void shouldPrintOneJsonObjectWithItsKeys(String structure, String fabric, String workload) {
        int keys = fabric.equals("tcp") ? 500 : 2000;
        int code = execute("bench", "map", "--structure", structure, "--fabric", fabric, "--keys", "" + keys,
                "--ops", "" + keys, "--workload", workload, "--threads", "2", "--json", "--no-progress");
        assertEquals(0, code, err.toString());
        String json = out.toString().strip();
        Map<String, Double> v = AsymNvmCliTest.parseFlatNumericObject(json);
        assertEquals(KEYS, List.copyOf(v.keySet()), json);
        assertTrue(v.get("ops_per_s") > 0 && v.get("baseline_ops_per_s") > 0, json);
        assertTrue(v.get("p50_us") > 0 && v.get("p99_us") >= v.get("p50_us"), json);
        // the JSON gives the ratio to 5 decimals: a small ratio (a fast baseline on a loaded machine) is off by up to
        // 5e-6 from the quotient of the printed rates, more than 1e-3 of itself below 0.005
        assertEquals(v.get("ops_per_s") / v.get("baseline_ops_per_s"), v.get("ratio"), 1e-3 * v.get("ratio") + 1e-5,
                json);
        assertTrue(v.get("runs_per_tx") >= 1.0, json);
        assertTrue(1 <= v.get("runs_per_tx_p50") && v.get("runs_per_tx_p50") <= v.get("runs_per_tx_p99")
                && v.get("runs_per_tx_p99") <= v.get("runs_per_tx_max"), json);
        if (workload.equals("c")) {
            // read only, every page cached after the warm-up: the reads run without the execution lock
            assertTrue(v.get("lockless_attempts") >= keys, json);
        }
        assertTrue(v.get("lockless_conflicts") >= 0 && v.get("lockless_fallbacks") <= v.get("lockless_conflicts"),
                json);
    }

    @Test
    void textShouldNameBothTargetsAndTheRatio() {
        int code = execute("bench", "map", "--structure", "hash", "--keys", "1000", "--ops", "1000", "--workload",
                "b", "--no-progress");
        assertEquals(0, code, err.toString());
        String text = out.toString();
        assertTrue(text.contains("hash map over the local fabric") && text.contains("ConcurrentHashMap")
                && text.contains("ratio") && text.contains("95% read"), text);
    }

    @Test
    void badOptionValuesShouldBeUsageErrors() {
        assertEquals(2, execute("bench", "map", "--keys", "10"));
        assertEquals(2, execute("bench", "map", "--structure", "list"));
        assertEquals(2, execute("bench", "map", "--structure", "hash", "--workload", "d"));
        assertTrue(err.toString().contains("a, b, c"), err.toString());
        assertEquals(2, execute("bench", "map", "--structure", "hash", "--fabric", "rdma"));
        assertEquals(2, execute("bench", "map", "--structure", "hash", "--keys", "0"));
        assertEquals(2, execute("bench", "map", "--structure", "hash", "--threads", "0"));
        assertEquals(2, execute("bench", "map", "--structure", "hash", "--theta", "1.5"));
        assertEquals(2, execute("bench", "map", "--structure", "hash", "--pm-size", "lots"));
        assertEquals(2, execute("bench", "map", "--structure", "hash", "--keys", "3", "--threads", "4",
                "--disjoint"));
        assertTrue(err.toString().contains("3 is fewer than the 4 threads"), err.toString());
        assertEquals("", out.toString());
    }

    /** Updates only, each thread on its own keys: the writers' bodies run without the execution lock. */
    @ParameterizedTest
    @CsvSource({"hash", "btree"})
    void disjointUpdatesShouldRunAsOptimisticWriters(String structure) {
        int code = execute("bench", "map", "--structure", structure, "--keys", "2000", "--ops", "2000",
                "--workload", "u", "--threads", "2", "--disjoint", "--json", "--no-progress");
        assertEquals(0, code, err.toString());
        String json = out.toString().strip();
        Map<String, Double> v = AsymNvmCliTest.parseFlatNumericObject(json);
        assertEquals(KEYS, List.copyOf(v.keySet()), json);
        assertTrue(v.get("optimistic_attempts") >= 2000, json);
        assertTrue(v.get("optimistic_fallbacks") <= v.get("optimistic_conflicts"), json); // no allocation
        assertTrue(v.get("conflicts_per_tx") >= 0
                && v.get("conflicts_per_tx") * 2000 <= v.get("optimistic_conflicts") + 1, json);
        // every commit took the ordering lock once, for some time; the workers' CPU and allocation were measured
        assertTrue(v.get("commit_lock_hold_us") > 0 && v.get("commit_lock_wait_us") >= 0
                && v.get("commit_lock_busy") > 0 && v.get("commit_lock_busy") <= 1, json);
        assertTrue(v.get("cpu_workers_us_per_op") > 0 && v.get("cpu_workers_alloc_bytes_per_op") > 0, json);
        // the process's CPU includes the workers', up to the clock ticks it is read in (2,000 operations)
        assertTrue(v.get("cpu_process_us_per_op") + ThreadCpu.PROCESS_CPU_SLACK_NANOS / 1000.0 / 2000
                >= v.get("cpu_workers_us_per_op"), json);
    }
}
