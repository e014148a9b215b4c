package io.asymnvm.examples.cli;

import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.StringWriter;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code bench commit --mirrors 1} (issue 9, item 2): one run measures the replicated commit (one SYNC mirror)
 * and an unreplicated one, and reports their quotient and the FLUSHes the replicated frontend posted per commit
 * to each node (one each: the record is posted to both and flushed in parallel, not chained). No timing is
 * asserted, only the keys, the quotient and the counts.
 */
@Timeout(120)
class CommitBenchMirrorsTest {
    private static final List<String> KEYS = List.of("commit_p50_us", "commit_p99_us", "rtt_p50_us", "ratio",
            "round_trips_per_commit", "commits", "mirrors", "unreplicated_p50_us", "replication_ratio",
            "backend_flushes_per_commit", "mirror_flushes_per_commit", "loopback_busy_rtt_us", "ratio_busy_rtt");

    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    private int execute(String... args) {
        return CliFixture.execute(out, err, args);
    }

    @ParameterizedTest
    @ValueSource(strings = {"local", "tcp"})
    void shouldReportTheReplicationRatioAndOneFlushPerNodePerCommit(String fabric) {
        int code = execute("bench", "commit", "--fabric", fabric, "--mirrors", "1", "--seconds", "1",
                "--warmup-seconds", "0", "--json");
        assertEquals(0, code, err.toString());
        String json = out.toString().strip();
        System.out.println("bench commit --fabric " + fabric + " --mirrors 1: " + json);
        Map<String, Double> v = AsymNvmCliTest.parseFlatNumericObject(AsymNvmCliTest.withoutTransport(json, fabric));
        assertEquals(KEYS, List.copyOf(v.keySet()), json);
        assertEquals(1.0, v.get("mirrors"), json);
        assertTrue(v.get("commits") > 0 && v.get("unreplicated_p50_us") > 0 && v.get("commit_p50_us") > 0, json);
        // the quotient of the printed p50s (each rounded to 3 decimals): equal up to that rounding
        assertEquals(v.get("commit_p50_us") / v.get("unreplicated_p50_us"), v.get("replication_ratio"),
                1e-3 * v.get("replication_ratio") + 1e-4, json);
        // one FLUSH per commit to each node (a chain backend -> mirror, or a second commit FLUSH, would read 2);
        // a commit whose record an earlier FLUSH already covered posts none, hence <= 1, and rarely
        double backend = v.get("backend_flushes_per_commit");
        double mirror = v.get("mirror_flushes_per_commit");
        assertTrue(backend > 0.99 && backend <= 1.0 + 1e-9, json);
        assertTrue(mirror > 0.99 && mirror <= 1.0 + 1e-9, json);
        double roundTrips = v.get("round_trips_per_commit");
        assertTrue(roundTrips > 0.99 && roundTrips <= 1.0, json);
    }

    @ParameterizedTest
    @ValueSource(strings = {"-1", "2"})
    void shouldRefuseOtherMirrorCountsAsUsageErrors(String mirrors) {
        assertEquals(2, execute("bench", "commit", "--fabric", "local", "--mirrors", mirrors, "--seconds", "1"));
        assertTrue(err.toString().contains("--mirrors") && err.toString().contains(mirrors), err.toString());
        assertEquals("", out.toString());
    }
}
