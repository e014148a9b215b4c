package io.asymnvm.examples.report;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.asymnvm.examples.support.ScratchDirectory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Writes {@code report.json} (Jackson: the machine, every row, the goal ratios, the figure files) and
 * {@code report.html} (a table of every row and the figures) into the output directory.
 */
final class ReportWriter {
    /** The goal of issue 8 for the design over the naive baseline, over tcp, YCSB-A. */
    static final double NAIVE_GOAL = 22.0;

    private ReportWriter() {
    }

    /** The machine the report ran on: cores, memory, JDK, OS, and the file system of the scratch PM files. */
    static Map<String, Object> machine() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("cores", Runtime.getRuntime().availableProcessors());
        m.put("max_heap_mib", Runtime.getRuntime().maxMemory() >> 20);
        m.put("physical_memory_mib", physicalMemoryMiB());
        m.put("jdk", System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version"));
        m.put("os", System.getProperty("os.name") + " " + System.getProperty("os.version") + " "
                + System.getProperty("os.arch"));
        Path base = ScratchDirectory.base();
        m.put("pm_directory", base.toString());
        try {
            m.put("pm_file_system", Files.getFileStore(base).type());
        } catch (IOException e) {
            m.put("pm_file_system", "unknown (" + e.getMessage() + ")");
        }
        return m;
    }

    private static long physicalMemoryMiB() {
        if (java.lang.management.ManagementFactory.getOperatingSystemMXBean()
                instanceof com.sun.management.OperatingSystemMXBean os) {
            return os.getTotalMemorySize() >> 20;
        }
        return -1;
    }

    /**
     * Ratios the issue sets goals for, from rows of this run: the design over the naive baseline over tcp, for
     * YCSB-A and map workload a, each structure. A ratio whose rows are missing or failed is left out.
     */
    static Map<String, Double> ratios(List<ReportOutcome> rows) {
        Map<String, ReportOutcome> byName = new LinkedHashMap<>();
        rows.stream().filter(ReportOutcome::ok).forEach(r -> byName.put(r.name(), r));
        Map<String, Double> out = new LinkedHashMap<>();
        for (String s : new String[] {"hash", "btree"}) {
            ratio(out, byName, "ycsb_a_" + s + "_tcp_over_naive_tcp", "ycsb-a/" + s + "/tcp",
                    "ycsb-a/" + s + "/naive-tcp");
            ratio(out, byName, "map_a_" + s + "_tcp_over_naive_tcp", "map-a/" + s + "/tcp", "map-a/" + s + "/naive-tcp");
        }
        return out;
    }

    private static void ratio(Map<String, Double> out, Map<String, ReportOutcome> rows, String key, String top,
                              String bottom) {
        ReportOutcome a = rows.get(top);
        ReportOutcome b = rows.get(bottom);
        if (a != null && b != null && b.opsPerSecond() > 0) {
            out.put(key, a.opsPerSecond() / b.opsPerSecond());
        }
    }

    static void write(Path dir, boolean quick, List<ReportOutcome> rows, Map<String, String> figures,
                      double totalSeconds) {
        ObjectMapper json = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
        ObjectNode root = json.createObjectNode();
        root.put("generated", Instant.now().toString());
        root.put("quick", quick);
        root.put("total_seconds", totalSeconds);
        root.set("machine", json.valueToTree(machine()));
        Map<String, Double> ratios = ratios(rows);
        root.set("ratios", json.valueToTree(ratios));
        root.put("naive_goal", NAIVE_GOAL);
        root.set("rows", json.valueToTree(rows));
        ArrayNode figs = root.putArray("figures");
        figures.values().forEach(figs::add);
        try {
            json.writeValue(dir.resolve("report.json").toFile(), root);
            Files.writeString(dir.resolve("report.html"), html(quick, rows, figures, ratios, totalSeconds),
                    StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the report into " + dir, e);
        }
    }

    private static String html(boolean quick, List<ReportOutcome> rows, Map<String, String> figures,
                               Map<String, Double> ratios, double totalSeconds) {
        StringBuilder b = new StringBuilder();
        b.append("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>AsymNVM bench report</title>\n")
                .append("<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}")
                .append("td,th{border:1px solid #bbb;padding:2px 8px;text-align:right}td:first-child,")
                .append("th:first-child{text-align:left}.err{color:#b00}</style></head><body>\n")
                .append("<h1>AsymNVM bench report").append(quick ? " (quick)" : "").append("</h1>\n<p>")
                .append(escape(Instant.now().toString())).append(String.format(Locale.ROOT, ", %.0f s. ",
                        totalSeconds));
        machine().forEach((k, v) -> b.append(escape(k)).append(": ").append(escape(String.valueOf(v))).append("; "));
        b.append("</p>\n<h2>Goal ratios</h2>\n<table><tr><th>ratio</th><th>value</th><th>goal</th></tr>\n");
        ratios.forEach((k, v) -> b.append(String.format(Locale.ROOT, "<tr><td>%s</td><td>%.1f</td><td>&ge; %.0f</td></tr>%n",
                escape(k), v, NAIVE_GOAL)));
        b.append("</table>\n<h2>Rows</h2>\n<table><tr><th>row</th><th>section</th><th>threads</th><th>ops/s</th>")
                .append("<th>p50 us</th><th>p99 us</th><th>p99.9 us</th><th>operations</th><th>s</th></tr>\n");
        for (ReportOutcome r : rows) {
            if (r.ok()) {
                b.append(String.format(Locale.ROOT, "<tr><td>%s</td><td>%s</td><td>%d</td><td>%,.0f</td>"
                                + "<td>%.1f</td><td>%.1f</td><td>%.1f</td><td>%,d</td><td>%.2f</td></tr>%n",
                        escape(r.name()), escape(r.section()), r.threads(), r.opsPerSecond(), r.p50Us(), r.p99Us(),
                        r.p999Us(), r.operations(), r.seconds()));
            } else {
                b.append("<tr><td>").append(escape(r.name())).append("</td><td>").append(escape(r.section()))
                        .append("</td><td colspan=\"7\" class=\"err\">failed: ").append(escape(r.error()))
                        .append("</td></tr>\n");
            }
        }
        b.append("</table>\n<h2>Figures</h2>\n");
        figures.forEach((title, file) -> b.append("<h3>").append(escape(title)).append("</h3>\n<img src=\"")
                .append(escape(file)).append("\" alt=\"").append(escape(title)).append("\">\n"));
        return b.append("</body></html>\n").toString();
    }

    private static String escape(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }
}
