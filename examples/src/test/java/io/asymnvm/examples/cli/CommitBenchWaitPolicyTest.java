package io.asymnvm.examples.cli;

import io.asymnvm.core.fabric.WaitPolicy;
import io.asymnvm.examples.commit.CommitRig;
import io.asymnvm.examples.commit.FabricKind;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.StringWriter;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code bench commit --wait-policy / --spin} and the busy-polled loopback probe (issue 8, goal 5): the keys each
 * adds, that the policy reaches the waiters, that {@code --mirrors 1} still works beside them, and refused values.
 * No timed assertion.
 */
@Timeout(120)
class CommitBenchWaitPolicyTest {
    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    private int execute(String... args) {
        return CliFixture.execute(out, err, args);
    }

    @Test
    void spinShouldReportTheBusyPolledLoopbackRoundTripAndItsRatio() {
        int code = execute("bench", "commit", "--fabric", "tcp", "--seconds", "1", "--warmup-seconds", "0",
                "--wait-policy", "spin", "--json");
        assertEquals(0, code, err.toString());
        String json = out.toString().strip();
        Map<String, Double> v = AsymNvmCliTest.parseFlatNumericObject(AsymNvmCliTest.withoutTransport(json, "tcp"));
        assertTrue(v.get("loopback_busy_rtt_us") > 0, json);
        assertEquals(v.get("commit_p50_us") / v.get("loopback_busy_rtt_us"), v.get("ratio_busy_rtt"), 0.01, json);
        double roundTrips = v.get("round_trips_per_commit");
        assertTrue(roundTrips > 0.999 && roundTrips <= 1.0, json);
        System.out.println("bench commit --fabric tcp --wait-policy spin (1 s): " + json);
    }

    @Test
    void parkWithMirrorShouldKeepTheReplicationKeysBesideTheBusyProbe() {
        int code = execute("bench", "commit", "--fabric", "local", "--seconds", "1", "--warmup-seconds", "0",
                "--wait-policy", "park", "--mirrors", "1", "--json");
        assertEquals(0, code, err.toString());
        Map<String, Double> v = AsymNvmCliTest.parseFlatNumericObject(
                AsymNvmCliTest.withoutTransport(out.toString().strip(), "local"));
        assertEquals(1.0, v.get("mirrors"), v.toString());
        assertTrue(v.get("replication_ratio") > 0 && v.get("commits") > 0, v.toString());
        assertTrue(v.get("ratio_busy_rtt") > 0, v.toString());
    }

    @Test
    void noBusyProbeShouldLeaveTheBusyKeysOut() {
        int code = execute("bench", "commit", "--fabric", "local", "--seconds", "1", "--warmup-seconds", "0",
                "--no-busy-probe", "--json");
        assertEquals(0, code, err.toString());
        Map<String, Double> v = AsymNvmCliTest.parseFlatNumericObject(
                AsymNvmCliTest.withoutTransport(out.toString().strip(), "local"));
        assertFalse(v.containsKey("loopback_busy_rtt_us") || v.containsKey("ratio_busy_rtt"), v.toString());
        assertTrue(v.get("commits") > 0, v.toString());
    }

    @Test
    void theRawRoundTripShouldWaitAsThePolicySays() {
        for (WaitPolicy.Kind kind : new WaitPolicy.Kind[] {WaitPolicy.Kind.SPIN, WaitPolicy.Kind.PARK}) {
            try (CommitRig rig = CommitRig.start(FabricKind.TCP, 0, kind)) {
                long before = rig.probeParks(); // the probe's attach call waited with the default policy
                for (int i = 0; i < 50; i++) {
                    rig.rawRoundTrip();
                    rig.commit(i);
                }
                if (kind == WaitPolicy.Kind.SPIN) {
                    assertEquals(0, rig.probeParks() - before, "a spinning waiter never parks");
                } else {
                    assertTrue(rig.probeParks() - before > 0, "a parking waiter parks: " + (rig.probeParks() - before));
                }
                assertEquals(kind, rig.waitPolicy());
            }
        }
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
