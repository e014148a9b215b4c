package io.asymnvm.examples.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.asymnvm.examples.smallbank.SmallBankMix;
import io.asymnvm.examples.tatp.TatpMix;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code bench tatp} and {@code bench smallbank} with tiny settings: one JSON object with the rates, the
 * per-type counts adding up to the transactions, SmallBank's money conserved; bad options refused naming value and
 * limit. No timed assertion.
 */
@Timeout(120)
class AppBenchCommandTest {
    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    private int execute(String... args) {
        return CliFixture.execute(out, err, args);
    }

    private JsonNode runJson(String... args) throws IOException {
        int code = execute(args);
        assertEquals(0, code, err.toString());
        return new ObjectMapper().readTree(out.toString().strip());
    }

    private static void assertCounts(JsonNode v, List<String> types) {
        List<String> names = new ArrayList<>();
        v.get("per_type").fieldNames().forEachRemaining(names::add);
        assertEquals(types, names, v.toString());
        long sum = 0;
        long userAborts = 0;
        for (String t : types) {
            sum += v.get("per_type").get(t).get("count").asLong();
            userAborts += v.get("per_type").get(t).get("user_aborts").asLong();
        }
        assertEquals(v.get("transactions").asLong(), sum, v.toString());
        assertEquals(v.get("user_aborts").asLong(), userAborts, v.toString());
        assertTrue(v.get("transactions").asLong() > 0, v.toString());
        assertTrue(v.get("ops_per_s").asDouble() > 0, v.toString());
        assertTrue(v.get("p99_us").asDouble() >= v.get("p50_us").asDouble(), v.toString());
        assertTrue(v.get("aborts").asLong() >= 0 && v.get("retries").asLong() >= 0, v.toString());
    }

    @ParameterizedTest
    @ValueSource(strings = {"local", "tcp"})
    void shouldRunTatpAndPrintOneJsonObject(String fabric) throws IOException {
        JsonNode v = runJson("bench", "tatp", "--fabric", fabric, "--threads", "2", "--seconds", "0.5",
                "--warmup-seconds", "0", "--subscribers", "100", "--json");
        assertEquals("tatp", v.get("app").asText());
        assertEquals(fabric, v.get("fabric").asText());
        assertEquals(2, v.get("threads").asInt());
        assertEquals(100, v.get("subscribers").asLong());
        assertEquals(100, v.get("subscriber_rows").asLong());
        assertCounts(v, TatpMix.TYPES);
    }

    @ParameterizedTest
    @ValueSource(strings = {"local", "tcp"})
    void shouldRunSmallBankAndConserveMoney(String fabric) throws IOException {
        JsonNode v = runJson("bench", "smallbank", "--fabric", fabric, "--threads", "2", "--seconds", "0.5",
                "--warmup-seconds", "0", "--accounts", "100", "--json");
        assertEquals("smallbank", v.get("app").asText());
        assertEquals(100, v.get("accounts").asLong());
        assertCounts(v, SmallBankMix.TYPES);
        assertTrue(v.get("money_conserved").asBoolean(), v.toString());
        assertEquals(v.get("money_expected").asLong(), v.get("money_actual").asLong());
    }

    @Test
    void shouldRefuseBadOptionsNamingValueAndLimit() {
        assertEquals(2, execute("bench", "tatp", "--threads", "0"));
        assertTrue(err.toString().contains("threads outside [1, 256]: 0"), err.toString());
        assertEquals(2, execute("bench", "smallbank", "--accounts", "1"));
        assertTrue(err.toString().contains("--accounts outside [2, 10000000]: 1"), err.toString());
        assertEquals(2, execute("bench", "tatp", "--seconds", "0"));
        assertTrue(err.toString().contains("seconds outside (0, 3600.0]: 0.0"), err.toString());
        assertEquals("", out.toString(), "nothing ran");
    }
}
