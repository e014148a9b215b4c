package io.asymnvm.examples.cli;

import io.asymnvm.examples.appbench.AppBenchConfig;
import io.asymnvm.examples.tatp.TatpBench;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code asymnvm bench tatp}: the TATP mix on a populated database (see {@link TatpBench}). */
@Command(name = "tatp", mixinStandardHelpOptions = true,
        description = "TATP: the standard seven-transaction mix, non-uniform subscriber ids.")
public final class TatpBenchCommand extends AppBenchCommand {
    @Option(names = "--subscribers", defaultValue = "10000", description = "Subscribers populated ("
            + TatpBench.MIN_SUBSCRIBERS + ".." + AppBenchConfig.MAX_SCALE + "). Default: ${DEFAULT-VALUE}.")
    long subscribers;

    public TatpBenchCommand() {
        super(new TatpBench(), "--subscribers", null);
    }

    @Override
    long scale() {
        return subscribers;
    }
}
