package io.asymnvm.examples.cli;

import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code asymnvm bench}: the group of measurements; it does nothing by itself. */
@Command(name = "bench", mixinStandardHelpOptions = true, description = "Measurements.",
        subcommands = {CommitBenchCommand.class, MapBenchCommand.class, PutsBenchCommand.class,
                RecoveryBenchCommand.class, RestartBenchCommand.class,
                ReportBenchCommand.class, TatpBenchCommand.class, SmallBankBenchCommand.class})
public final class BenchCommand implements Runnable {
    @Spec
    CommandSpec spec;

    @Override
    public void run() {
        throw new ParameterException(spec.commandLine(), "Missing required subcommand");
    }
}
