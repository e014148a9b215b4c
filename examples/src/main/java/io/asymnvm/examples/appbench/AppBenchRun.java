package io.asymnvm.examples.appbench;

import io.asymnvm.examples.support.BenchRig;
import io.asymnvm.examples.support.ScratchDirectory;
import io.asymnvm.frontend.tx.EngineStats;

import java.nio.file.Path;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * One application benchmark run: a {@link BenchRig} sized for the population, the population (timed), the mix
 * unmeasured for the warm-up, then measured with the engine's counters around it, then the application's checks.
 */
public final class AppBenchRun {
    private AppBenchRun() {
    }

    /** Runs {@code app} as {@code config} says, after checking its scale against {@code minScale}. */
    public static AppBenchReport run(Application app, long minScale, AppBenchConfig config,
                                     Consumer<String> progress) {
        return run(app, minScale, config, ScratchDirectory.base(), progress);
    }

    /** As {@link #run(Application, long, AppBenchConfig, Consumer)}, the PM file inside {@code scratchParent}. */
    public static AppBenchReport run(Application app, long minScale, AppBenchConfig config, Path scratchParent,
                                     Consumer<String> progress) {
        Objects.requireNonNull(app, "app");
        Objects.requireNonNull(progress, "progress");
        config.requireScale(app.scaleName(), minScale);
        long scale = config.scale();
        try (BenchRig rig = BenchRig.start(config.fabric(), AppBenchConfig.pmBytes(scale, app.bytesPerUnit()),
                AppBenchConfig.cacheBytes(scale, app.bytesPerUnit()), scratchParent,
                "asymnvm-bench-" + app.name() + "-")) {
            progress.accept("populating " + scale + " " + app.scaleName());
            long loadStart = System.nanoTime();
            Application.Loaded loaded = app.load(rig.nvm(), scale, config.seed());
            long loadNanos = System.nanoTime() - loadStart;
            MixDriver driver = new MixDriver(loaded.mix(), config.threads());
            if (config.warmupSeconds() > 0) {
                progress.accept("warming up for " + config.warmupSeconds() + " s");
                driver.run(config.warmupSeconds(), config.seed() + 1);
            }
            progress.accept("measuring for " + config.seconds() + " s on " + config.threads() + " threads");
            EngineStats before = rig.nvm().stats();
            MixPhase phase = driver.run(config.seconds(), config.seed() + 2);
            EngineStats after = rig.nvm().stats();
            return AppBenchReport.of(app.name(), config.fabric().cliName(), config.threads(), config.seconds(),
                    app.scaleName(), scale, loadNanos, phase, before, after, loaded.checks());
        }
    }
}
