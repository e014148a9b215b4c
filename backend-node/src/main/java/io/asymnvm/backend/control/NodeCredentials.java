package io.asymnvm.backend.control;

import io.asymnvm.backend.BackendConfiguration;
import io.asymnvm.core.auth.FrontendCredentials;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * How a starting node comes by its {@link AttachAuthenticator}: an existing credentials file is read and validated
 * before anything is bound or mapped ({@link #loadExisting}); a missing one is created, mode 0600, once the image
 * is open and its number of frontend ids known ({@link #authenticator}). Secure by default: only an explicit
 * {@code insecure} turns authentication off, and says so at WARN.
 */
public final class NodeCredentials {
    private static final Logger LOG = LoggerFactory.getLogger(NodeCredentials.class);

    private NodeCredentials() {
    }

    /** The configured credentials file if it exists (validated), else null. */
    public static FrontendCredentials loadExisting(BackendConfiguration config) {
        Path file = config.credentialsFile();
        return file != null && Files.exists(file) ? FrontendCredentials.load(file) : null;
    }

    /** The node's gate: creates the credentials file with a secret per frontend id when it does not exist. */
    public static AttachAuthenticator authenticator(BackendConfiguration config, FrontendCredentials existing,
                                                    int frontends) {
        Path file = config.credentialsFile();
        if (file == null) {
            if (config.port() >= 0) {
                LOG.warn("authentication is OFF (insecure): any peer that reaches {}:{} may attach as any frontend "
                        + "and fence it", config.bindHost(), config.port());
            }
            return AttachAuthenticator.insecure();
        }
        FrontendCredentials credentials = existing;
        if (credentials == null) {
            credentials = FrontendCredentials.createIfAbsent(file, frontends);
            LOG.info("created credentials file {} (mode 0600) with secrets of frontends 0..{}", file, frontends - 1);
        }
        LOG.info("tcp frontends authenticate with {}", file);
        return AttachAuthenticator.of(credentials);
    }
}
