package io.asymnvm.examples.commit;

import io.asymnvm.backend.BackendNode;
import io.asymnvm.examples.support.CliEnum;
import io.asymnvm.frontend.AsymNvm;
import io.asymnvm.frontend.FrontendOptions;

/** The fabrics a commit measurement can run over, by their command-line names. */
public enum FabricKind {
    /** In-process: the backend runs in this JVM, operations are method calls. */
    LOCAL,
    /** Loopback TCP to an in-process backend's emulated NIC. */
    TCP;

    /** The loopback host a {@code tcp} frontend connects to. */
    public static final String HOST = "127.0.0.1";

    /** A backend's port setting over this fabric: a free loopback port for {@code tcp}, none for {@code local}. */
    public int backendPort() {
        return this == TCP ? 0 : -1;
    }

    /** Attaches frontend {@code frontendId} to {@code node} over this fabric (its port for {@code tcp}). */
    public AsymNvm attach(BackendNode node, int frontendId, FrontendOptions options) {
        return this == TCP ? AsymNvm.connect(HOST, node.port(), frontendId, options)
                : AsymNvm.open(node.localFabric(), frontendId, options);
    }

    /** The command-line name. */
    public String cliName() {
        return CliEnum.cliName(this);
    }

    /** Parses a command-line name, case-insensitively; the message of a bad one lists the valid names. */
    public static FabricKind parse(String name) {
        return CliEnum.parse(FabricKind.class, "fabric", name);
    }

    public static String names() {
        return CliEnum.names(FabricKind.class);
    }

    /** Picocli converter: a bad name is a usage error. */
    public static final class Converter extends CliEnum.Converter<FabricKind> {
        public Converter() {
            super(FabricKind.class, "fabric");
        }
    }

    /** Picocli completion candidates and ${COMPLETION-CANDIDATES}. */
    public static final class Names extends CliEnum.Names<FabricKind> {
        public Names() {
            super(FabricKind.class);
        }
    }
}
