package io.asymnvm.examples.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.StringWriter;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code bench recovery} and {@code bench restart}: one JSON object each, with their keys. */
@Timeout(60)
class RecoveryBenchCommandTest {
    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    private int execute(String... args) {
        return CliFixture.execute(out, err, args);
    }

    @Test
    void benchRecoveryShouldReExecuteEveryRecord() {
        assertEquals(0, execute("bench", "recovery", "--records", "1000", "--json"), err.toString());
        String json = out.toString().strip();
        Map<String, Double> v = AsymNvmCliTest.parseFlatNumericObject(json);
        assertEquals(List.of("records", "recovered", "open_ms", "recover_ms", "transactions_per_s", "commit_s",
                "repetitions", "recover_ms_max"),
                List.copyOf(v.keySet()), json);
        assertEquals(1000.0, v.get("records"), json);
        assertEquals(1000.0, v.get("recovered"), json);
        assertTrue(v.get("recover_ms") > 0 && v.get("transactions_per_s") > 0, json);
    }

    @Test
    void benchRestartShouldTimeEveryRestart() {
        assertEquals(0, execute("bench", "restart", "--size", "64m", "--repetitions", "3", "--json"), err.toString());
        String json = out.toString().strip();
        Map<String, Double> v = AsymNvmCliTest.parseFlatNumericObject(json);
        assertEquals(List.of("size_bytes", "repetitions", "restart_ms_p50", "restart_ms_max", "restart_ms_min",
                "format_ms"), List.copyOf(v.keySet()), json);
        assertEquals(64.0 * 1024 * 1024, v.get("size_bytes"), json);
        assertEquals(3.0, v.get("repetitions"), json);
        assertTrue(v.get("restart_ms_p50") > 0 && v.get("restart_ms_max") >= v.get("restart_ms_p50"), json);
    }

    @Test
    void badBenchOptionsShouldBeUsageErrors() {
        assertEquals(2, execute("bench", "recovery", "--records", "0"));
        assertEquals(2, execute("bench", "recovery", "--records", "1000000"));
        assertEquals(2, execute("bench", "restart", "--size", "1m"));
        assertEquals(2, execute("bench", "restart", "--size", "lots"));
        assertEquals("", out.toString());
    }
}
