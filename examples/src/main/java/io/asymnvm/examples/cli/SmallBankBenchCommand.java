package io.asymnvm.examples.cli;

import io.asymnvm.examples.appbench.AppBenchConfig;
import io.asymnvm.examples.smallbank.SmallBankBench;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code asymnvm bench smallbank}: the SmallBank mix with hotspot access, then the money check (see
 * {@link SmallBankBench}); exit code 1 when money was lost or made.
 */
@Command(name = "smallbank", mixinStandardHelpOptions = true,
        description = "SmallBank: the standard six-transaction mix with hotspot access; checks the money.")
public final class SmallBankBenchCommand extends AppBenchCommand {
    @Option(names = "--accounts", defaultValue = "10000", description = "Customers opened ("
            + SmallBankBench.MIN_ACCOUNTS + ".." + AppBenchConfig.MAX_SCALE + "). Default: ${DEFAULT-VALUE}.")
    long accounts;

    public SmallBankBenchCommand() {
        super(new SmallBankBench(), "--accounts", "money_conserved");
    }

    @Override
    long scale() {
        return accounts;
    }
}
