package io.asymnvm.examples.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.StringWriter;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code --mode naive} on {@code bench map} and {@code ycsb}: the baseline runs and stays correct. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class NaiveModeCommandsTest {
    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    private int execute(String... args) {
        return CliFixture.executeAsMain(out, err, args);
    }

    @Test
    void benchMapShouldRunTheNaiveBaselineOverTcpAndFindEveryValue() {
        int code = execute("bench", "map", "--structure", "btree", "--fabric", "tcp", "--mode", "naive", "--keys",
                "300", "--ops", "300", "--workload", "a", "--json", "--no-progress");
        assertEquals(0, code, err.toString()); // exit 1 if a read found no value
        Map<String, Double> v = AsymNvmCliTest.parseFlatNumericObject(out.toString().strip());
        assertTrue(v.get("ops_per_s") > 0, out.toString());
        assertEquals(0.0, v.get("lockless_attempts"), "naive mode runs no call without its lock: " + out);
    }

    @Test
    void benchMapTextShouldSayNaiveMode() {
        assertEquals(0, execute("bench", "map", "--structure", "hash", "--mode", "naive", "--keys", "200", "--ops",
                "200", "--no-progress"), err.toString());
        assertTrue(out.toString().contains("in naive mode"), out.toString());
    }

    @Test
    void ycsbShouldPassItsValueChecksInNaiveMode() throws Exception {
        int code = execute("ycsb", "--workload", "a", "--structure", "hash", "--mode", "naive", "--records", "300",
                "--operations", "300", "--json");
        assertEquals(0, code, err.toString());
        JsonNode phases = new ObjectMapper().readTree(out.toString());
        assertEquals(2, phases.size(), out.toString());
        for (JsonNode p : phases) {
            assertEquals(0, p.path("failed").asLong(), p.toString());
            assertEquals(0, p.path("verifyErrors").asLong(), p.toString());
        }
        assertTrue(phases.get(1).path("verified").asLong() > 0, phases.toString());
    }

    @Test
    void aBadModeShouldBeAUsageError() {
        assertEquals(2, execute("bench", "map", "--structure", "hash", "--mode", "lazy"));
        assertTrue(err.toString().contains("'lazy'") && err.toString().contains("asymnvm, naive"), err.toString());
        assertEquals(2, execute("ycsb", "--mode", "lazy"));
    }
}
