package io.asymnvm.examples.cli;

import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;

/**
 * Runs {@code asymnvm} commands in this JVM with their standard output and error captured: the setup the CLI tests
 * share. {@link #execute} keeps picocli's own handling (an unexpected exception reaches {@code err} with its stack
 * trace); {@link #executeAsMain} runs the command line as {@link AsymNvmCli#main} does (quiet logging, a runtime
 * failure as one line).
 */
public final class CliFixture {
    private CliFixture() {
    }

    /** Runs {@code args} on a plain picocli command line; returns the exit code. */
    public static int execute(StringWriter out, StringWriter err, String... args) {
        return execute(new CommandLine(new AsymNvmCli()), out, err, args);
    }

    /** Runs {@code args} as {@code main} would ({@link AsymNvmCli#newCommandLine()}); returns the exit code. */
    public static int executeAsMain(StringWriter out, StringWriter err, String... args) {
        return execute(AsymNvmCli.newCommandLine(), out, err, args);
    }

    private static int execute(CommandLine cl, StringWriter out, StringWriter err, String... args) {
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        return cl.execute(args);
    }
}
