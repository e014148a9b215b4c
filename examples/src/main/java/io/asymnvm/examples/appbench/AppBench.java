package io.asymnvm.examples.appbench;

import io.asymnvm.examples.commit.FabricKind;
import io.asymnvm.examples.report.ReportWorkload;

import java.util.Objects;
import java.util.function.Consumer;

/**
 * What every application benchmark ({@code bench tatp}, {@code bench smallbank}) shares: its names, the bytes one
 * unit of its population takes and its smallest population, and the two ways it runs: alone
 * ({@link #run(AppBenchConfig, Consumer)}) and as a row of the comparison matrix ({@link #reportWorkload}). A
 * subclass gives only {@link #load}.
 */
public abstract class AppBench implements Application {
    private final String name;
    private final String scaleName;
    private final long bytesPerUnit;
    private final long minScale;

    protected AppBench(String name, String scaleName, long bytesPerUnit, long minScale) {
        this.name = Objects.requireNonNull(name, "name");
        this.scaleName = Objects.requireNonNull(scaleName, "scaleName");
        this.bytesPerUnit = bytesPerUnit;
        this.minScale = minScale;
    }

    @Override
    public final String name() {
        return name;
    }

    @Override
    public final String scaleName() {
        return scaleName;
    }

    @Override
    public final long bytesPerUnit() {
        return bytesPerUnit;
    }

    /** The smallest population the application accepts. */
    public final long minScale() {
        return minScale;
    }

    /** This application as a row of the comparison matrix over {@code fabric}. */
    public final ReportWorkload reportWorkload(FabricKind fabric) {
        return new AppReportWorkload(this, minScale, fabric);
    }

    /** Runs one benchmark; {@code progress} receives a line per phase. */
    public final AppBenchReport run(AppBenchConfig config, Consumer<String> progress) {
        return AppBenchRun.run(this, minScale, config, progress);
    }
}
