package io.asymnvm.examples.support;

import io.asymnvm.backend.BackendConfiguration;
import io.asymnvm.backend.BackendNode;
import io.asymnvm.core.region.PersistentRegion;
import io.asymnvm.examples.commit.FabricKind;
import io.asymnvm.frontend.AsymNvm;
import io.asymnvm.frontend.FrontendOptions;

import java.util.Objects;
import java.util.function.Consumer;

/**
 * The part of a benchmark rig every rig with one backend and one frontend shares ({@link BenchRig},
 * {@code bench puts}' rig): a backend node started on its PM file, its port set for the fabric, and frontend 0
 * attached over {@code local} or {@code tcp} with the node's credentials. {@link #close()} detaches, then stops the
 * node; what the rig owns besides (a scratch directory, a mapped region) it closes after.
 */
public final class NodeWithFrontend implements AutoCloseable {
    private BackendNode node;
    private AsymNvm nvm;

    private NodeWithFrontend() {
    }

    /**
     * Starts the node {@code backend} describes (on {@code region}, or on a region it maps itself when null), calls
     * {@code started} with it, then attaches frontend 0 with {@code frontend} and the node's credentials. If any
     * step fails, what was started is stopped before the failure is rethrown.
     */
    public static NodeWithFrontend start(FabricKind fabric, BackendConfiguration.Builder backend,
                                         PersistentRegion region, Consumer<BackendNode> started,
                                         FrontendOptions.Builder frontend) {
        Objects.requireNonNull(fabric, "fabric");
        NodeWithFrontend pair = new NodeWithFrontend();
        try {
            BackendConfiguration config = backend.port(fabric.backendPort()).conclude();
            pair.node = region == null ? BackendNode.start(config) : BackendNode.start(config, region);
            started.accept(pair.node);
            pair.nvm = fabric.attach(pair.node, 0, frontend.credentials(pair.node.credentialsFile()).conclude());
            return pair;
        } catch (RuntimeException e) {
            closeAfterFailure(pair, e);
            throw e;
        }
    }

    /** Closes {@code rig} after {@code failure}, adding a failure of the close to it as suppressed. */
    public static void closeAfterFailure(AutoCloseable rig, RuntimeException failure) {
        try {
            rig.close();
        } catch (Exception suppressed) {
            failure.addSuppressed(suppressed);
        }
    }

    public BackendNode node() {
        return node;
    }

    public AsymNvm nvm() {
        return nvm;
    }

    /** Ships every redo batch and waits until the backend applied (and persisted) every committed transaction. */
    public void drain() {
        nvm.sync();
        node.awaitReplayed();
    }

    @Override
    public void close() {
        try {
            if (nvm != null) {
                nvm.close();
            }
        } finally {
            if (node != null) {
                node.close();
            }
        }
    }
}
