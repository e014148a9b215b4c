package io.asymnvm.mirror;

import io.asymnvm.core.auth.AttachProof;
import io.asymnvm.core.auth.FrontendCredentials;
import io.asymnvm.core.fabric.Fabric;
import io.asymnvm.core.fabric.FabricConnection;
import io.asymnvm.core.layout.ControlMessageLayout;
import io.asymnvm.core.layout.ReplicationLayout;
import io.asymnvm.core.layout.SuperblockLayout;
import io.asymnvm.core.layout.SuperblockLayout.Superblock;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.Function;

/**
 * The calls an operator or a starting mirror makes to a node with the replication secret (formats in
 * {@link ReplicationLayout}): ask a backend for its geometry and to ship to a mirror (ADD_MIRROR), and promote a
 * mirror (PROMOTE). Each asks for a challenge first and answers it with the secret; with no secret (authentication
 * off) the proof is all zero.
 */
public final class ReplicationClient {
    private ReplicationClient() {
    }

    /** The replication secret of {@code credentials}, or null when the file is null (authentication off). */
    public static byte[] secretOf(Path credentials) {
        if (credentials == null) {
            return null;
        }
        if (!Files.exists(credentials)) {
            throw new IllegalArgumentException("credentials file " + credentials + " does not exist: give the "
                    + "backend's credentials file (it holds the replication secret)");
        }
        return FrontendCredentials.load(credentials).replicationSecret();
    }

    private static byte[] call(FabricConnection c, byte[] secret, int purpose, long arg,
                               Function<byte[], byte[]> request) {
        byte[] nonce = c.call(ControlMessageLayout.request(ControlMessageLayout.KIND_CHALLENGE, 0, 0)).await().bytes();
        byte[] proof = secret == null ? new byte[ControlMessageLayout.PROOF_LENGTH]
                : AttachProof.compute(secret, nonce, purpose, arg);
        return c.call(request.apply(proof)).await().bytes();
    }

    /**
     * ADD_MIRROR: the backend's superblock (geometry, identity, current epoch); with {@code ship}, the backend also
     * starts shipping to the mirror at {@code host:port}.
     */
    public static Superblock addMirror(Fabric backend, byte[] secret, boolean ship, String host, int port) {
        return addMirror(backend, secret, ship, false, host, port);
    }

    /** {@link #addMirror(Fabric, byte[], boolean, String, int)}; {@code async}: the mirror is ASYNC (issue 9). */
    public static Superblock addMirror(Fabric backend, byte[] secret, boolean ship, boolean async, String host,
                                       int port) {
        long flags = ship ? ReplicationLayout.ADD_SHIP | (async ? ReplicationLayout.ADD_ASYNC : 0) : 0;
        try (FabricConnection c = backend.connect()) {
            byte[] sb = call(c, secret, ReplicationLayout.PURPOSE_ADD_MIRROR, flags,
                    proof -> ReplicationLayout.addMirror(flags, host, ship ? port : 1, proof));
            return SuperblockLayout.decode(sb, "the backend's superblock", fileSizeOf(sb));
        }
    }

    private static long fileSizeOf(byte[] sb) {
        return ReplicationLayout.wrap(sb).getLong(SuperblockLayout.FILE_SIZE_OFFSET);
    }

    /** PROMOTE: the mirror becomes the backend; returns its new epoch. */
    public static long promote(Fabric mirror, byte[] secret) {
        try (FabricConnection c = mirror.connect()) {
            byte[] reply = call(c, secret, ReplicationLayout.PURPOSE_PROMOTE, 0, ReplicationLayout::promote);
            return ReplicationLayout.wrap(reply).getLong(0);
        }
    }
}
