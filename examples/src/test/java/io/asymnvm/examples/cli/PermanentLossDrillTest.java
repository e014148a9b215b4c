package io.asymnvm.examples.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.StringWriter;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The permanent-loss drill (issue 9, item 7) as CI runs it, short: ZooKeeper in the test JVM, backend, mirror and
 * worker as child JVMs; each iteration SIGKILLs the backend and deletes its image, the mirror is promoted through
 * ZooKeeper, a fresh mirror joins and catches up, and the bank must hold. The lease is 3 s here so that a busy
 * build machine's pauses do not expire sessions (a failover nobody caused fails the drill).
 */
class PermanentLossDrillTest {
    private static final List<String> REQUIRED_KEYS = List.of("iterations", "acknowledged", "lost", "partial",
            "violations", "failover_ms_p50", "failover_ms_max");

    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    private int execute(String... args) {
        return CliFixture.execute(out, err, args);
    }

    @Test
    @Timeout(150)
    void shouldPromoteTheMirrorAtEveryLossAndLoseNothing() {
        int code = execute("drill", "--kill", "backend", "--permanent", "--mirrors", "1", "--iterations", "2",
                "--seed", "21", "--max-acks", "150", "--lease-ms", "3000", "--json");
        String json = out.toString().strip();
        assertEquals(0, code, json + "\n" + err);
        Map<String, Double> v = AsymNvmCliTest.parseFlatNumericObject(json);
        assertEquals(REQUIRED_KEYS, List.copyOf(v.keySet()).subList(0, REQUIRED_KEYS.size()), json);
        assertEquals(2.0, v.get("iterations"), json);
        assertEquals(0.0, v.get("lost"), json);
        assertEquals(0.0, v.get("partial"), json);
        assertEquals(0.0, v.get("violations"), json);
        assertTrue(v.get("acknowledged") > 0, json);
        // the first start, one reconnected worker per iteration (after the promotion), the final verify-only
        assertTrue(v.get("verifications") >= 4.0, json);
        // a failover waits for the backend's session to expire (the lease, less the time since its last heartbeat)
        assertTrue(v.get("failover_ms_p50") >= 1000 && v.get("failover_ms_max") >= v.get("failover_ms_p50"), json);
        assertTrue(v.get("reconfigured_ms_p50") > 0 && v.get("resume_ms_p50") >= 0, json);
        System.out.println("permanent-loss drill: " + json);
    }

    /** SYNC mirror losses: the configuration drops it, commits go on, a fresh mirror joins (run with -Pslow). */
    @org.junit.jupiter.api.Tag("slow")
    @Test
    @Timeout(150)
    void shouldDropALostMirrorCommitWithoutItAndAddAFreshOne() {
        int code = execute("drill", "--kill", "mirror", "--mirrors", "1", "--iterations", "2", "--seed", "22",
                "--max-acks", "150", "--lease-ms", "3000", "--json");
        String json = out.toString().strip();
        assertEquals(0, code, json + "\n" + err);
        Map<String, Double> v = AsymNvmCliTest.parseFlatNumericObject(json);
        assertEquals(2.0, v.get("iterations"), json);
        assertEquals(0.0, v.get("lost"), json);
        assertEquals(0.0, v.get("partial"), json);
        assertEquals(0.0, v.get("violations"), json);
        assertTrue(v.get("verifications") >= 4.0, json);
    }

    @Test
    @Timeout(30)
    void badPermanentDrillOptionsShouldBeUsageErrors() {
        assertEquals(2, execute("drill", "--kill", "frontend", "--permanent", "--iterations", "1"));
        assertTrue(err.toString().contains("--kill backend only"), err.toString());
        assertEquals(2, execute("drill", "--kill", "backend", "--permanent", "--mirrors", "2", "--iterations", "1"));
        assertTrue(err.toString().contains("--mirrors"), err.toString());
        assertEquals(2, execute("drill", "--kill", "backend", "--permanent", "--lease-ms", "10"));
        assertTrue(err.toString().contains("--lease-ms"), err.toString());
        assertEquals("", out.toString());
    }
}
