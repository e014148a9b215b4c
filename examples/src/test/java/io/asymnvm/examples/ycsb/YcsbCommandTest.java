package io.asymnvm.examples.ycsb;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.asymnvm.examples.cli.CliFixture;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * YCSB's own client (a child JVM running {@code site.ycsb.Client}) against the binding, with YCSB's standard
 * 1 KiB records (10 fields x 100 bytes) and its value checks on: the real-client test of issue 7. The short form
 * runs A and F; the slow tag runs every workload on every structure and fabric with more records.
 */
@Timeout(value = 600, unit = TimeUnit.SECONDS)
class YcsbCommandTest {
    private String err;

    private int run(List<String> args, StringWriter out) {
        StringWriter e = new StringWriter();
        int code = CliFixture.executeAsMain(out, e, args.toArray(String[]::new));
        err = e.toString();
        return code;
    }

    private JsonNode ycsb(String workloads, String fabric, String structure, int records, int threads,
                          String... extra) throws Exception {
        List<String> args = new ArrayList<>(List.of("ycsb", "--workload", workloads, "--fabric", fabric,
                "--structure", structure, "--records", String.valueOf(records), "--operations",
                String.valueOf(records), "--threads", String.valueOf(threads), "--json"));
        args.addAll(List.of(extra));
        StringWriter out = new StringWriter();
        int code = run(args, out);
        JsonNode phases = new ObjectMapper().readTree(out.toString());
        phases.forEach(p -> ((ObjectNode) p).put("cliExit", code));
        return phases;
    }

    private void assertClean(JsonNode phases, int workloads) {
        assertEquals(2 * workloads, phases.size(), err);
        for (JsonNode p : phases) {
            String where = p.toString() + "\n" + err;
            assertEquals(0, p.path("cliExit").asInt(), where);
            assertEquals(0, p.path("exitCode").asInt(), where);
            assertEquals(0, p.path("failed").asLong(), where);
            assertEquals(0, p.path("verifyErrors").asLong(), where);
            assertTrue(p.path("operations").asLong() > 0, where);
            if (p.path("phase").asText().equals("run")) {
                assertTrue(p.path("verified").asLong() > 0, "YCSB checked values it read: " + where);
            }
        }
    }

    @ParameterizedTest(name = "{0} {1} {2} threads")
    @CsvSource({"local, hash, 1", "tcp, btree, 2"})
    void shouldPassWorkloadsAAndFWithStandardRecordsAndValueChecks(String fabric, String structure, int threads)
            throws Exception {
        JsonNode phases = ycsb("af", fabric, structure, 1_500, threads);
        assertClean(phases, 2);
        for (JsonNode p : phases) {
            boolean run = p.path("phase").asText().equals("run");
            // by default the binding warms each run phase up, in the client JVM, with as many operations as records
            // (reported from there): each a read, and half of them (A: updates, F: read-modify-writes) an update
            assertEquals(run ? 1_500 : 0, p.path("warmupOperations").asLong(), p.toString());
            long updates = p.path("warmupUpdates").asLong();
            assertTrue(run ? updates > 600 && updates < 900 : updates == 0, p.toString());
            assertEquals(1_500, p.path("expectedOperations").asLong(), p.toString());
            String op = run ? "READ" : "INSERT"; // YCSB's median and average of each kind it ran
            assertTrue(p.path("medianMicros").path(op).asDouble() > 0, p.toString());
            assertTrue(p.path("averageMicros").path(op).asDouble() > 0, p.toString());
            assertTrue(p.path("busyOpsPerSecond").asDouble() > 0, p.toString());
        }
    }

    @Test
    void shouldReportFailedOperationsAndFailedValueChecks() throws Exception {
        JsonNode phases = ycsb("a", "local", "hash", 500, 1, "--db", CorruptingYcsbDb.class.getName());
        JsonNode run = phases.get(1);
        assertEquals(1, run.path("cliExit").asInt(), "exit code 1 on failures: " + run);
        assertTrue(run.path("verifyErrors").asLong() > 0, "every read value was corrupted: " + run);
        assertEquals(0, run.path("verified").asLong(), run.toString());
        assertTrue(run.path("failed").asLong() > 0, "every tenth update failed: " + run);
    }

    @Test
    void shouldRefuseANegativeWarmUp() {
        int code = run(List.of("ycsb", "--warmup-operations", "-1"), new StringWriter());
        assertEquals(2, code);
        assertTrue(err.contains("Invalid value for option '--warmup-operations': -1 is outside [0, 100000000]"), err);
    }

    @Test
    void shouldRefuseWorkloadEOnTheHashMap() {
        int code = run(List.of("ycsb", "--workload", "e", "--structure", "hash"), new StringWriter());
        assertEquals(2, code);
        assertTrue(err.contains("workload e scans key ranges: it needs --structure btree"), err);
    }

    /** Every workload, structure and fabric, 1 and 4 threads (E on the B+tree only). */
    @ParameterizedTest(name = "{0} {1} {2} threads")
    @CsvSource({"local, hash, 1", "local, hash, 4", "tcp, hash, 1", "tcp, hash, 4", "local, btree, 1",
            "local, btree, 4", "tcp, btree, 1", "tcp, btree, 4"})
    @Tag("slow")
    void shouldPassEveryWorkload(String fabric, String structure, int threads) throws Exception {
        String workloads = structure.equals("btree") ? "abcdef" : "abcdf";
        assertClean(ycsb(workloads, fabric, structure, 20_000, threads), workloads.length());
    }
}
