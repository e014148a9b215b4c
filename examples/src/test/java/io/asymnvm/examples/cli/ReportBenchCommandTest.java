package io.asymnvm.examples.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.asymnvm.examples.report.ReportEntry;
import io.asymnvm.examples.report.ReportMatrix;
import io.asymnvm.frontend.ExecutionMode;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code bench report} end to end with tiny durations: the JSON parses, every selected matrix row is in it and
 * ran, the HTML names every figure and every figure it names exists as a PNG. No timed assertion.
 */
class ReportBenchCommandTest {
    private static final Pattern IMG = Pattern.compile("<img src=\"([^\"]+)\"");

    @TempDir
    Path out;

    private final StringWriter stdout = new StringWriter();
    private final StringWriter stderr = new StringWriter();

    private int execute(String... args) {
        return CliFixture.execute(stdout, stderr, args);
    }

    /**
     * The quick matrix without the YCSB rows but one (each YCSB row starts two JVMs) and with the hash map's rows of
     * map workload a only (design local and tcp, naive, ConcurrentHashMap), every puts row (MapDB, Chronicle Map,
     * floor), thread scaling, and YCSB A on the hash map.
     */
    @Test
    @Timeout(value = 240, unit = TimeUnit.SECONDS)
    void shouldWriteJsonAndHtmlWithEverySelectedRowAndItsFigures() throws Exception {
        List<String> prefixes = List.of("map-a/hash", "map-a/ConcurrentHashMap", "puts/", "scaling",
                "ycsb-a/hash/local");
        int code = execute("bench", "report", "--quick", "--out", out.toString(), "--seconds", "0.2", "--records",
                "300", "--only", String.join(",", prefixes), "--no-progress", "--ycsb-warmup-operations", "120");
        assertEquals(0, code, stdout + "\n" + stderr);
        List<String> expected = new ArrayList<>();
        for (ReportEntry e : ReportMatrix.build(ReportMatrix.Sizes.forQuick(), EnumSet.allOf(ExecutionMode.class))) {
            if (prefixes.stream().anyMatch(p -> e.name().startsWith(p) || e.section().equals(p))) {
                expected.add(e.name());
            }
        }
        assertTrue(expected.stream().anyMatch(n -> n.endsWith("/t8")) && expected.contains("puts/mapdb-wal")
                && expected.contains("map-a/hash/naive-tcp") && expected.contains("ycsb-a/hash/local"), expected.toString());
        JsonNode report = checkReport(expected);
        for (JsonNode row : report.path("rows")) { // the YCSB client warmed up as asked, reported from its JVM
            if (row.path("section").asText().equals(ReportMatrix.YCSB)) {
                assertEquals(120, row.path("metrics").path("warmup_operations").asLong(), row.toString());
            }
        }
        // the naive baseline ran over tcp and its ratio is computed from both measured rows; which side wins a
        // 0.3-second row is timing (a loaded CI machine once gave 0.09), so only a finite positive ratio is asserted
        double ratio = report.path("ratios").path("map_a_hash_tcp_over_naive_tcp").asDouble();
        assertTrue(ratio > 0 && Double.isFinite(ratio), report.path("ratios").toString());
        Set<String> figures = new HashSet<>();
        report.path("figures").forEach(f -> figures.add(f.asText()));
        assertTrue(figures.containsAll(List.of("throughput-map.png", "throughput-puts.png", "latency-map.png",
                "latency-puts.png", "scaling.png", "throughput-ycsb.png")), figures.toString());
    }

    /** The whole quick matrix, YCSB A to F on both structures included (about two minutes). */
    @Test
    @Tag("slow")
    @Timeout(value = 600, unit = TimeUnit.SECONDS)
    void shouldRunEveryRowOfTheQuickMatrix() throws Exception {
        int code = execute("bench", "report", "--quick", "--out", out.toString(), "--no-progress");
        assertEquals(0, code, stdout + "\n" + stderr);
        List<String> expected = new ArrayList<>();
        ReportMatrix.build(ReportMatrix.Sizes.forQuick(), EnumSet.allOf(ExecutionMode.class))
                .forEach(e -> expected.add(e.name()));
        checkReport(expected);
    }

    private JsonNode checkReport(List<String> expected) throws Exception {
        JsonNode report = new ObjectMapper().readTree(out.resolve("report.json").toFile());
        List<String> names = new ArrayList<>();
        for (JsonNode row : report.path("rows")) {
            names.add(row.path("name").asText());
            assertFalse(row.has("error"), "row failed: " + row);
            assertTrue(row.path("opsPerSecond").asDouble() > 0 && row.path("operations").asLong() > 0,
                    "row measured nothing: " + row);
            if (!row.path("section").asText().equals(ReportMatrix.YCSB)) {
                assertTrue(row.path("latencySamples").asLong() > 0 && row.path("cdf").size() > 0, row.toString());
                assertTrue(row.path("p99Us").asDouble() >= row.path("p50Us").asDouble(), row.toString());
            }
        }
        assertEquals(expected, names);
        assertTrue(report.path("machine").path("cores").asInt() >= 1, report.path("machine").toString());

        String html = Files.readString(out.resolve("report.html"), StandardCharsets.UTF_8);
        Set<String> referenced = new HashSet<>();
        Matcher m = IMG.matcher(html);
        while (m.find()) {
            referenced.add(m.group(1));
        }
        Set<String> listed = new HashSet<>();
        report.path("figures").forEach(f -> listed.add(f.asText()));
        assertEquals(listed, referenced, "the HTML shows exactly the figures the JSON lists");
        for (String png : referenced) {
            byte[] head = Files.readAllBytes(out.resolve(png));
            assertTrue(head.length > 8 && head[1] == 'P' && head[2] == 'N' && head[3] == 'G', png + " is no PNG");
        }
        for (String name : expected) {
            assertTrue(html.contains(name), "HTML lacks row " + name);
        }
        return report;
    }

    @Test
    @Timeout(60)
    void badOptionValuesShouldBeUsageErrors() {
        assertEquals(2, execute("bench", "report", "--seconds", "0", "--out", out.toString()));
        assertTrue(stderr.toString().contains("'--seconds': 0.0"), stderr.toString());
        assertEquals(2, execute("bench", "report", "--records", "0", "--out", out.toString()));
        assertEquals(2, execute("bench", "report", "--mode", "fast", "--out", out.toString()));
        assertTrue(stderr.toString().contains("asymnvm, naive"), stderr.toString());
        assertEquals(2, execute("bench", "report", "--only", "nothing-like-this", "--out", out.toString()));
        assertEquals(List.of(), List.of(out.toFile().list()), "nothing written on a usage error");
    }
}
