package io.asymnvm.examples.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.asymnvm.testsupport.ShmTempDirFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code bench puts} with tiny settings (1 s per target): every key present, the ratios the quotients of the printed
 * rates, the write amplification positive and finite, nothing left in the PM directory. No timed assertion.
 */
@Timeout(120)
class PutsBenchCommandTest {
    private static final List<String> KEYS = List.of("fabric", "threads", "value_size", "keys", "hot_keys",
            "seconds", "ops_per_s", "floor_ops_per_s", "mapdb_ops_per_s", "ratio_floor", "ratio_mapdb", "p50_us",
            "p99_us", "floor_p50_us", "mapdb_p50_us", "puts", "logical_bytes", "pm_redo_bytes", "pm_heap_bytes",
            "pm_semantic_bytes", "pm_other_bytes", "pm_bytes_per_logical_byte", "semantic_bytes_per_logical_byte",
            "pm_written_redo_bytes", "pm_written_heap_bytes", "pm_written_bytes_per_logical_byte",
            "pm_syncs_per_put", "commit_round_trips_per_put", "flushes_per_put", "puts_per_redo_batch", "retries_per_put",
            "cpu_process_us_per_op", "cpu_workers_us_per_op", "cpu_frontend_agent_us_per_op",
            "cpu_backend_replayer_us_per_op", "cpu_backend_io_us_per_op", "cpu_other_threads_us_per_op",
            "cpu_jvm_gc_us_per_op", "cpu_jvm_jit_us_per_op", "cpu_jvm_other_us_per_op",
            "cpu_workers_alloc_bytes_per_op");

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    private int execute(String... args) {
        return CliFixture.execute(out, err, args);
    }

    @ParameterizedTest
    @ValueSource(strings = {"local", "tcp"})
    void shouldReportEveryKeyWithRatiosOfTheReportedRates(String fabric) throws IOException {
        int code = execute("bench", "puts", "--fabric", fabric, "--value-size", "200", "--threads", "2",
                "--seconds", "1", "--warmup-seconds", "0", "--keys", "64", "--pm-size", "128m", "--pm-dir",
                dir.toString(), "--json");
        assertEquals(0, code, err.toString());
        String json = out.toString().strip();
        JsonNode v = new ObjectMapper().readTree(json);
        List<String> names = new ArrayList<>();
        v.fieldNames().forEachRemaining(names::add);
        assertEquals(KEYS, names, json);
        assertEquals(fabric, v.get("fabric").asText());
        assertEquals(2, v.get("threads").asInt());
        assertEquals(200, v.get("value_size").asInt());
        assertEquals(64, v.get("keys").asInt());
        assertTrue(!v.get("hot_keys").asBoolean(), json);

        double ops = v.get("ops_per_s").asDouble();
        double floor = v.get("floor_ops_per_s").asDouble();
        double mapDb = v.get("mapdb_ops_per_s").asDouble();
        assertTrue(ops > 0 && floor > 0 && mapDb > 0, json);
        assertEquals(ops / floor, v.get("ratio_floor").asDouble(), 1e-4 + 1e-6 * ops / floor, json);
        assertEquals(ops / mapDb, v.get("ratio_mapdb").asDouble(), 1e-4 + 1e-6 * ops / mapDb, json);
        assertTrue(v.get("p50_us").asDouble() > 0 && v.get("p99_us").asDouble() >= v.get("p50_us").asDouble(),
                json);

        long puts = v.get("puts").asLong();
        assertTrue(puts > 0, json);
        // every put is "user<i>" (5 or 6 ASCII bytes for i < 64) and a 200-byte value
        long logical = v.get("logical_bytes").asLong();
        assertTrue(logical >= puts * 205 && logical <= puts * 206, json);
        double amplification = v.get("pm_bytes_per_logical_byte").asDouble();
        assertTrue(amplification > 0 && Double.isFinite(amplification), json);
        double counted = (v.get("pm_redo_bytes").asDouble() + v.get("pm_heap_bytes").asDouble()) / logical;
        assertEquals(counted, amplification, 1e-4, json);
        // the put's arguments (key and value) travel in the commit record: at least one logical byte each
        assertTrue(v.get("semantic_bytes_per_logical_byte").asDouble() >= 1.0, json);
        // the replayer stores the values into the heap: a value replaced in place is written at the same address,
        // so a redo batch keeps only the last value per key (coalescing), but every batch holds at least one put
        double batches = puts / v.get("puts_per_redo_batch").asDouble();
        assertTrue(v.get("pm_written_heap_bytes").asLong() >= 200 * (batches - 1), "the values reach the heap: "
                + json);
        // and every stored heap byte is persisted (whole 64-byte lines around it)
        assertTrue(v.get("pm_heap_bytes").asLong() >= v.get("pm_written_heap_bytes").asLong(), json);
        double stored = v.get("pm_written_bytes_per_logical_byte").asDouble();
        // below one logical byte when repeated puts to a key coalesce in a redo batch (64 keys here)
        assertTrue(stored > 0 && stored < amplification, json);
        // a SYNC put waits for about one FLUSH round trip (fewer when group commit shares one)
        double roundTrips = v.get("commit_round_trips_per_put").asDouble();
        assertTrue(roundTrips > 0 && roundTrips <= 2.0, json);
        double flushes = v.get("flushes_per_put").asDouble();
        assertTrue(flushes > 0 && flushes <= 2.0, json);
        assertTrue(v.get("puts_per_redo_batch").asDouble() >= 1.0, json);
        // every FLUSH writes back at least the commit records it covers: one write-back call or more per FLUSH
        double syncs = v.get("pm_syncs_per_put").asDouble();
        assertTrue(syncs >= flushes - 1e-3 && Double.isFinite(syncs), json);

        try (Stream<Path> left = Files.list(dir)) {
            assertEquals(List.of(), left.toList(), "the run deletes its files");
        }
    }

    @Test
    void hotKeysShouldPutSixteenKeysAndPrintTheTable() {
        int code = execute("bench", "puts", "--hot-keys", "--value-size", "64", "--seconds", "1",
                "--warmup-seconds", "0", "--pm-size", "128m", "--pm-dir", dir.toString());
        assertEquals(0, code, err.toString());
        String text = out.toString();
        assertTrue(text.contains("16 hot keys") && text.contains("floor: append + force")
                && text.contains("MapDB") && text.contains("PM bytes persisted per logical byte"), text);
    }

    @Test
    void badOptionValuesShouldBeUsageErrorsNamingValueAndLimit() {
        assertEquals(2, execute("bench", "puts", "--value-size", "0"));
        assertTrue(err.toString().contains("'--value-size': 0 is outside [1, 65536]"), err.toString());
        assertEquals(2, execute("bench", "puts", "--threads", "257"));
        assertTrue(err.toString().contains("'--threads': 257 is outside [1, 256]"), err.toString());
        assertEquals(2, execute("bench", "puts", "--seconds", "0"));
        assertEquals(2, execute("bench", "puts", "--warmup-seconds", "-1"));
        assertEquals(2, execute("bench", "puts", "--keys", "0"));
        assertEquals(2, execute("bench", "puts", "--hot-keys", "--keys", "100"));
        assertTrue(err.toString().contains("100 contradicts --hot-keys"), err.toString());
        assertEquals(2, execute("bench", "puts", "--fabric", "rdma"));
        assertEquals(2, execute("bench", "puts", "--pm-size", "lots"));
        assertEquals(2, execute("bench", "puts", "--pm-size", "1m"));
        assertTrue(err.toString().contains("'--pm-size': 1048576 is outside"), err.toString());
        assertEquals(2, execute("bench", "puts", "--pm-size", "1t", "--pm-dir", dir.toString()));
        assertTrue(err.toString().contains("bytes free in " + dir), err.toString());
        assertEquals(2, execute("bench", "puts", "--pm-dir", dir.resolve("missing").toString()));
        assertTrue(err.toString().contains("missing is not a writable directory"), err.toString());
        assertEquals("", out.toString());
    }
}
