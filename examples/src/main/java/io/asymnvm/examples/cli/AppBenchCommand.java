package io.asymnvm.examples.cli;

import io.asymnvm.examples.appbench.AppBench;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

import java.util.Objects;
import java.util.concurrent.Callable;

/**
 * What {@code bench tatp} and {@code bench smallbank} share: the options ({@link AppBenchOptions}) and the run. A
 * subclass declares its population option (named {@code scaleOption}) and returns its value from {@link #scale()}.
 */
abstract class AppBenchCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    AppBenchOptions options;

    private final AppBench app;
    private final String scaleOption;
    private final String failedCheck;

    /** {@code failedCheck}: the check whose false value makes the exit code 1, or null. */
    AppBenchCommand(AppBench app, String scaleOption, String failedCheck) {
        this.app = Objects.requireNonNull(app, "app");
        this.scaleOption = Objects.requireNonNull(scaleOption, "scaleOption");
        this.failedCheck = failedCheck;
    }

    /** The population option's value. */
    abstract long scale();

    @Override
    public final Integer call() {
        return options.run(spec, scaleOption, scale(), app.minScale(), app::run, failedCheck);
    }
}
