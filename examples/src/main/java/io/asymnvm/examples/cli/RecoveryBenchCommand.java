package io.asymnvm.examples.cli;

import io.asymnvm.examples.commit.FabricKind;
import io.asymnvm.examples.recovery.FrontendRecoveryRun;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.util.concurrent.Callable;

/**
 * {@code asymnvm bench recovery}: frontend recovery time for N semantic records after the applied transaction
 * (see {@link FrontendRecoveryRun}). With {@code --json}, standard output is exactly one JSON object.
 */
@Command(name = "recovery", mixinStandardHelpOptions = true,
        description = "Frontend recovery time: re-execute N semantic records after the applied transaction.")
public final class RecoveryBenchCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "--records", defaultValue = "10000", description = "Semantic records to recover (1.."
            + FrontendRecoveryRun.MAX_RECORDS + "). Default: ${DEFAULT-VALUE}.")
    int records;

    @Option(names = "--fabric", defaultValue = "tcp", converter = FabricKind.Converter.class,
            completionCandidates = FabricKind.Names.class,
            description = "Fabric of the recovering frontend: ${COMPLETION-CANDIDATES} (the commits before the "
                    + "crash always use local). Default: ${DEFAULT-VALUE}.")
    FabricKind fabric;

    @Option(names = "--repetitions", defaultValue = "3", description = "Crashes and recoveries measured (1..20); "
            + "medians are reported. Default: ${DEFAULT-VALUE}.")
    int repetitions;

    @Option(names = "--json", description = "Print one JSON object with records, recovered, open_ms, recover_ms, "
            + "transactions_per_s, commit_s, repetitions, recover_ms_max.")
    boolean json;

    @Override
    public Integer call() {
        if (records < 1 || records > FrontendRecoveryRun.MAX_RECORDS) {
            throw new ParameterException(spec.commandLine(), "Invalid value for option '--records': " + records
                    + " is outside [1, " + FrontendRecoveryRun.MAX_RECORDS + "]");
        }
        if (repetitions < 1 || repetitions > 20) {
            throw new ParameterException(spec.commandLine(), "Invalid value for option '--repetitions': "
                    + repetitions + " is outside [1, 20]");
        }
        FrontendRecoveryRun.Report report = FrontendRecoveryRun.run(records, fabric, repetitions);
        PrintWriter out = spec.commandLine().getOut();
        out.print(json ? report.toJson() + "\n" : report.toText());
        out.flush();
        return 0;
    }
}
