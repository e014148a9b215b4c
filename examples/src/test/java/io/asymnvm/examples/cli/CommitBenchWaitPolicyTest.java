package io.asymnvm.examples.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code bench commit --wait-policy / --spin}: the keys each adds, and refused values. No timed assertion. */
@Timeout(120)
class CommitBenchWaitPolicyTest {
    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    private int execute(String... args) {
        CommandLine cl = new CommandLine(new AsymNvmCli());
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        return cl.execute(args);
    }

    @Test
    void spinShouldAddTheBusyPolledLoopbackRoundTripAndItsRatio() {
        int code = execute("bench", "commit", "--fabric", "tcp", "--seconds", "1", "--warmup-seconds", "0",
                "--spin", "--json");
        assertEquals(0, code, err.toString());
        String json = out.toString().strip();
        Map<String, Double> v = AsymNvmCliTest.parseFlatNumericObject(json);
        assertTrue(v.get("spin_rtt_p50_us") > 0, json);
        assertEquals(v.get("commit_p50_us") / v.get("spin_rtt_p50_us"), v.get("spin_ratio"), 0.01, json);
        double roundTrips = v.get("round_trips_per_commit");
        assertTrue(roundTrips > 0.999 && roundTrips <= 1.0, json);
    }

    @Test
    void parkShouldMeasureWithoutTheSpinKeys() {
        int code = execute("bench", "commit", "--fabric", "local", "--seconds", "1", "--warmup-seconds", "0",
                "--wait-policy", "park", "--json");
        assertEquals(0, code, err.toString());
        Map<String, Double> v = AsymNvmCliTest.parseFlatNumericObject(out.toString().strip());
        assertFalse(v.containsKey("spin_rtt_p50_us"), v.toString());
        assertTrue(v.get("commits") > 0, v.toString());
    }

    @Test
    void shouldRefuseAnUnknownPolicyAndAContradictionNamingThem() {
        assertEquals(2, execute("bench", "commit", "--fabric", "local", "--wait-policy", "yield"));
        assertTrue(err.toString().contains("'yield'") && err.toString().contains("spin, adaptive, park"),
                err.toString());
        err.getBuffer().setLength(0);
        assertEquals(2, execute("bench", "commit", "--fabric", "local", "--wait-policy", "park", "--spin"));
        assertTrue(err.toString().contains("--spin contradicts --wait-policy park"), err.toString());
        assertEquals("", out.toString());
    }
}
