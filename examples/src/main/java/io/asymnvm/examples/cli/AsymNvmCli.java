package io.asymnvm.examples.cli;

import io.asymnvm.backend.BackendMain;
import io.asymnvm.backend.InspectTool;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParseResult;
import picocli.CommandLine.Spec;

import java.util.List;

/**
 * The top command {@code asymnvm}. Exit codes: 0 success, 1 runtime failure (one line on standard error) or
 * failed verification, 2 bad usage (picocli's message and usage on standard error). Results go to standard
 * output, logs (slf4j-simple) and progress bars to standard error, so {@code --json} output can be piped.
 *
 * <p>{@link #main} turns INFO logging off (WARN and above remain) except for {@code backend}; set
 * {@code -Dorg.slf4j.simpleLogger.defaultLogLevel=info} in {@code ASYMNVM_JAVA_OPTS} to see it.
 */
@Command(name = "asymnvm", mixinStandardHelpOptions = true,
        versionProvider = AsymNvmCli.Version.class,
        description = "Transactional persistent data structures on disaggregated persistent memory.",
        subcommands = {DemoCommand.class, BackendMain.class, BenchCommand.class, KvCommand.class, CredentialsCommand.class, YcsbCommand.class, DrillCommand.class, InspectTool.class, StatusCommand.class,
                DrillWorkerCommand.class, DrillBackendCommand.class, DrillNodeCommand.class, DrillZooKeeperCommand.class,
                CommandLine.HelpCommand.class,
                MirrorCommand.class, MirrorCommand.Promote.class, ClusterCommand.class},
        footer = {"", "Logging goes to standard error; ASYMNVM_JAVA_OPTS=-Dorg.slf4j.simpleLogger.defaultLogLevel=info "
                + "shows INFO logs of every command."})
public final class AsymNvmCli implements Runnable {
    static final String LOG_LEVEL_PROPERTY = "org.slf4j.simpleLogger.defaultLogLevel";

    @Spec
    CommandSpec spec;

    @Override
    public void run() {
        throw new ParameterException(spec.commandLine(), "Missing required subcommand");
    }

    public static void main(String[] args) {
        System.exit(newCommandLine().execute(args));
    }

    /** The command line as {@link #main} runs it: quiet logging, runtime failures as one line. */
    public static CommandLine newCommandLine() {
        CommandLine cl = new CommandLine(new AsymNvmCli());
        cl.setExecutionStrategy(AsymNvmCli::executeQuietly);
        cl.setExecutionExceptionHandler((ex, cmd, parsed) -> {
            cmd.getErr().println("asymnvm " + cmd.getCommandName() + ": " + oneLine(ex));
            cmd.getErr().flush();
            return CommandLine.ExitCode.SOFTWARE;
        });
        return cl;
    }

    private static int executeQuietly(ParseResult parsed) {
        List<CommandLine> chain = parsed.asCommandLineList();
        String command = chain.get(chain.size() - 1).getCommandName();
        if (System.getProperty(LOG_LEVEL_PROPERTY) == null && !"backend".equals(command)) {
            System.setProperty(LOG_LEVEL_PROPERTY, "warn");
        }
        return new CommandLine.RunLast().execute(parsed);
    }

    static String oneLine(Throwable t) {
        String m = t.getMessage();
        if (m == null || m.isBlank()) {
            m = t.getClass().getName();
        }
        return m.replaceAll("\\s*\\R\\s*", " ").strip();
    }

    /** The version from the jar manifest, if packaged. */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            String v = AsymNvmCli.class.getPackage().getImplementationVersion();
            return new String[] {"asymnvm " + (v == null ? "(development build)" : v)};
        }
    }
}
