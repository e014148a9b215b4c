package io.asymnvm.examples.report;

import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.internal.chartpart.Chart;
import org.knowm.xchart.style.Styler;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The report's figures as PNG files (XChart, headless): throughput by row for each section (log scale), latency
 * CDFs of the map rows of workload a and of the puts rows, and throughput against threads. A figure without data
 * (every row of it failed, or the section was filtered out) is not written; {@link #write} returns the files it
 * wrote, by their titles.
 */
final class ReportCharts {
    private static final int WIDTH = 1100;
    private static final int HEIGHT = 650;

    private ReportCharts() {
    }

    /** Writes the figures of {@code rows} into {@code dir}; returns title to file name, in order. */
    static Map<String, String> write(List<ReportOutcome> rows, Path dir) {
        System.setProperty("java.awt.headless", "true");
        Map<String, String> files = new LinkedHashMap<>();
        for (String section : new String[] {ReportMatrix.MAP, ReportMatrix.YCSB, ReportMatrix.PUTS,
                ReportMatrix.APPS}) {
            throughput(rows, section, dir, files);
        }
        latency(rows, "latency-map", "Latency CDF, map workload a (50% updates), 1 thread",
                r -> r.section().equals(ReportMatrix.MAP) && r.name().startsWith("map-a/"), dir, files);
        latency(rows, "latency-puts", "Latency CDF, durable 1 KiB puts, 1 thread",
                r -> r.section().equals(ReportMatrix.PUTS), dir, files);
        latency(rows, "latency-apps", "Latency CDF, applications",
                r -> r.section().equals(ReportMatrix.APPS), dir, files);
        scaling(rows, dir, files);
        return files;
    }

    private static void throughput(List<ReportOutcome> rows, String section, Path dir, Map<String, String> files) {
        List<String> names = new ArrayList<>();
        List<Number> ops = new ArrayList<>();
        for (ReportOutcome r : rows) {
            if (r.section().equals(section) && r.ok() && r.opsPerSecond() > 0) {
                names.add(r.name());
                ops.add(r.opsPerSecond());
            }
        }
        if (names.isEmpty()) {
            return;
        }
        String title = "Throughput, " + section + " (ops/s, log scale)";
        CategoryChart chart = new CategoryChartBuilder().width(WIDTH).height(HEIGHT).title(title)
                .xAxisTitle("row").yAxisTitle("ops/s").build();
        double least = ops.stream().mapToDouble(Number::doubleValue).min().orElse(1);
        chart.getStyler().setYAxisLogarithmic(true).setXAxisLabelRotation(60).setLegendVisible(false);
        // bars start at the axis minimum: a log axis needs one above zero (a decade under the lowest bar)
        chart.getStyler().setYAxisMin(Math.pow(10, Math.floor(Math.log10(least))));
        chart.getStyler().setYAxisDecimalPattern("#,###");
        chart.addSeries("ops/s", names, ops);
        save(chart, dir, "throughput-" + section, title, files);
    }

    private static void latency(List<ReportOutcome> rows, String file, String title,
                                java.util.function.Predicate<ReportOutcome> which, Path dir,
                                Map<String, String> files) {
        XYChart chart = new XYChartBuilder().width(WIDTH).height(HEIGHT).title(title)
                .xAxisTitle("latency (us, log scale)").yAxisTitle("percentile").build();
        chart.getStyler().setXAxisLogarithmic(true).setLegendPosition(Styler.LegendPosition.InsideSE)
                .setMarkerSize(3);
        boolean any = false;
        for (ReportOutcome r : rows) {
            if (!which.test(r) || !r.ok() || r.cdf().isEmpty()) {
                continue;
            }
            double[] x = new double[r.cdf().size()];
            double[] y = new double[x.length];
            for (int i = 0; i < x.length; i++) {
                x[i] = Math.max(0.1, r.cdf().get(i)[1]);
                y[i] = r.cdf().get(i)[0];
            }
            chart.addSeries(r.name(), x, y);
            any = true;
        }
        if (any) {
            save(chart, dir, file, title, files);
        }
    }

    private static void scaling(List<ReportOutcome> rows, Path dir, Map<String, String> files) {
        Map<String, List<ReportOutcome>> byWorkload = new LinkedHashMap<>();
        for (ReportOutcome r : rows) {
            if (r.section().equals(ReportMatrix.SCALING) && r.ok()) {
                byWorkload.computeIfAbsent(r.workload(), k -> new ArrayList<>()).add(r);
            }
        }
        if (byWorkload.isEmpty()) {
            return;
        }
        String title = "Thread scaling (ops/s against client threads)";
        XYChart chart = new XYChartBuilder().width(WIDTH).height(HEIGHT).title(title).xAxisTitle("threads")
                .yAxisTitle("ops/s").build();
        chart.getStyler().setYAxisDecimalPattern("#,###");
        chart.getStyler().setLegendPosition(Styler.LegendPosition.InsideNW);
        for (Map.Entry<String, List<ReportOutcome>> e : byWorkload.entrySet()) {
            double[] x = e.getValue().stream().mapToDouble(ReportOutcome::threads).toArray();
            double[] y = e.getValue().stream().mapToDouble(ReportOutcome::opsPerSecond).toArray();
            chart.addSeries(e.getKey(), x, y);
        }
        save(chart, dir, "scaling", title, files);
    }

    private static void save(Chart<?, ?> chart, Path dir, String file, String title, Map<String, String> files) {
        try {
            BitmapEncoder.saveBitmap(chart, dir.resolve(file).toString(), BitmapEncoder.BitmapFormat.PNG);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the figure " + dir.resolve(file + ".png"), e);
        }
        files.put(title, file + ".png");
    }
}
