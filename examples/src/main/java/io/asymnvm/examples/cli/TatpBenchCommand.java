package io.asymnvm.examples.cli;

import io.asymnvm.examples.appbench.AppBenchConfig;
import io.asymnvm.examples.tatp.TatpBench;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.util.concurrent.Callable;

/** {@code asymnvm bench tatp}: the TATP mix on a populated database (see {@link TatpBench}). */
@Command(name = "tatp", mixinStandardHelpOptions = true,
        description = "TATP: the standard seven-transaction mix, non-uniform subscriber ids.")
public final class TatpBenchCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    AppBenchOptions options;

    @Option(names = "--subscribers", defaultValue = "10000", description = "Subscribers populated ("
            + TatpBench.MIN_SUBSCRIBERS + ".." + AppBenchConfig.MAX_SCALE + "). Default: ${DEFAULT-VALUE}.")
    long subscribers;

    @Override
    public Integer call() {
        return options.run(spec, "--subscribers", subscribers, TatpBench.MIN_SUBSCRIBERS, TatpBench::run, null);
    }
}
