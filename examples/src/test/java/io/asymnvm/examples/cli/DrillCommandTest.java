package io.asymnvm.examples.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.StringWriter;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The short drills, as CI runs them: real backend and worker JVMs, SIGKILLed, recovered, verified. */
class DrillCommandTest {
    private static final List<String> REQUIRED_KEYS = List.of("iterations", "acknowledged", "lost", "partial",
            "violations", "recovery_ms_p50", "recovery_ms_max");

    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    private int execute(String... args) {
        return CliFixture.execute(out, err, args);
    }

    @ParameterizedTest
    @ValueSource(strings = {"frontend", "backend"})
    @Timeout(90)
    void shortDrillShouldLoseNothingAndReportItsKeys(String kill) {
        int code = execute("drill", "--kill", kill, "--iterations", "3", "--seed", "11", "--max-acks", "150",
                "--json");
        String json = out.toString().strip();
        assertEquals(0, code, json + "\n" + err);
        Map<String, Double> v = AsymNvmCliTest.parseFlatNumericObject(json);
        assertEquals(REQUIRED_KEYS, List.copyOf(v.keySet()).subList(0, REQUIRED_KEYS.size()), json);
        assertEquals(3.0, v.get("iterations"), json);
        assertEquals(0.0, v.get("lost"), json);
        assertEquals(0.0, v.get("partial"), json);
        assertEquals(0.0, v.get("violations"), json);
        assertTrue(v.get("acknowledged") > 0, json);
        assertTrue(v.get("recovery_ms_p50") > 0 && v.get("recovery_ms_max") >= v.get("recovery_ms_p50"), json);
        assertTrue(v.get("inspections") >= 3, json); // after every kill
        // frontend: a verification per restart plus the first and the final one; backend: the first and the final
        assertTrue(v.get("verifications") >= (kill.equals("frontend") ? 5.0 : 2.0), json);
    }

    @Test
    @Timeout(30)
    void badDrillOptionsShouldBeUsageErrors() {
        assertEquals(2, execute("drill", "--kill", "network", "--iterations", "1"));
        assertTrue(err.toString().contains("frontend, backend, mirror or zookeeper"), err.toString());
        err.getBuffer().setLength(0);
        assertEquals(2, execute("drill", "--kill", "zookeeper", "--mirrors", "3", "--iterations", "1"));
        assertTrue(err.toString().contains("'--mirrors': 3 is outside [1, 2]"), err.toString());
        assertEquals(2, execute("drill", "--kill", "zookeeper", "--lease-ms", "100", "--iterations", "1"));
        assertTrue(err.toString().contains("'--lease-ms': 100 is outside [200, 60000]"), err.toString());
        assertEquals(2, execute("drill", "--kill", "frontend", "--iterations", "0"));
        assertEquals(2, execute("drill", "--kill", "frontend", "--workload", "btree"));
        assertTrue(err.toString().contains("only bank"), err.toString());
        assertEquals(2, execute("drill", "--iterations", "1"));
        assertEquals("", out.toString());
    }
}
