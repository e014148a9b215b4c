package io.asymnvm.examples.cli;

import io.asymnvm.core.auth.FrontendCredentials;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.nio.file.Path;
import java.util.concurrent.Callable;

/**
 * {@code asymnvm credentials}: writes one frontend's secret from a backend's credentials file to a file of its own
 * (mode 0600), the file to hand to that frontend's host, so it never holds the secrets of the others.
 */
@Command(name = "credentials", mixinStandardHelpOptions = true,
        description = "Export one frontend's credential from a backend's credentials file to its own file (0600).")
public final class CredentialsCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "--from", required = true, paramLabel = "FILE",
            description = "The backend's credentials file (by default beside its PM file: PM.credentials).")
    Path from;

    @Option(names = "--frontend", required = true, paramLabel = "N", description = "The frontend id to export.")
    int frontendId;

    @Option(names = "--out", required = true, paramLabel = "FILE", description = "The file to create (must not exist).")
    Path out;

    @Override
    public Integer call() {
        FrontendCredentials.load(from).export(frontendId, out);
        spec.commandLine().getOut().println("wrote the credential of frontend " + frontendId + " to " + out
                + " (mode 0600)");
        return 0;
    }
}
