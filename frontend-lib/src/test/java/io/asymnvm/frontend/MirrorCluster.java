package io.asymnvm.frontend;

import io.asymnvm.backend.BackendConfiguration;
import io.asymnvm.backend.BackendNode;
import io.asymnvm.core.fabric.Fabric;
import io.asymnvm.core.fabric.tcp.TcpFabric;
import io.asymnvm.core.layout.ControlBlockLayout;
import io.asymnvm.core.layout.SuperblockLayout;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;

/**
 * A backend and stand-ins for its SYNC mirrors, over TCP on loopback: the backend's image is formatted, closed,
 * and byte-copied before anything attaches (same identity, geometry and ring positions), and each copy is served
 * by a second backend node. A stand-in answers as a backend and never receives redo (it applies nothing), which is
 * what a mirror looks like to a frontend's commit path; with {@code standInEpoch} above the backend's it is what a
 * promoted mirror looks like (promotion bumps the superblock epoch). All nodes share one credentials file.
 */
final class MirrorCluster implements AutoCloseable {
    static final long SIZE = 64L << 20;

    private final Path dir;
    private final Path credentials;
    private final UnaryOperator<BackendConfiguration.Builder> tuning;
    private final List<Fabric> fabrics = new ArrayList<>();
    final Path backendFile;
    final List<Path> mirrorFiles = new ArrayList<>();
    BackendNode backend;
    final List<BackendNode> mirrors = new ArrayList<>();
    /** Reach the nodes over the in-process {@code local} fabric instead of tcp. */
    private boolean local;

    private MirrorCluster(Path dir, int mirrorCount, long standInEpochBump,
                          UnaryOperator<BackendConfiguration.Builder> tuning, Path credentials) {
        this.dir = dir;
        this.credentials = credentials != null ? credentials : dir.resolve("cluster.credentials");
        this.tuning = tuning;
        this.backendFile = dir.resolve("backend.pm");
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        BackendNode.start(config(backendFile)).close(); // format
        for (int i = 0; i < mirrorCount; i++) {
            Path copy = dir.resolve("mirror-" + i + ".pm");
            copyImage(backendFile, copy, standInEpochBump);
            mirrorFiles.add(copy);
        }
        backend = BackendNode.start(config(backendFile));
        for (Path f : mirrorFiles) {
            mirrors.add(BackendNode.start(config(f)));
        }
    }

    static MirrorCluster start(Path dir, int mirrors) {
        return new MirrorCluster(dir, mirrors, 0, UnaryOperator.identity(), null);
    }

    /** Another cluster (another image) whose nodes take the same credentials as {@code like}'s. */
    static MirrorCluster startLike(MirrorCluster like, Path dir) {
        return new MirrorCluster(dir, 0, 0, UnaryOperator.identity(), like.credentials);
    }

    static MirrorCluster start(Path dir, int mirrors, long standInEpochBump,
                               UnaryOperator<BackendConfiguration.Builder> tuning) {
        return new MirrorCluster(dir, mirrors, standInEpochBump, tuning, null);
    }

    BackendConfiguration config(Path file) {
        return config(file, 0);
    }

    BackendConfiguration config(Path file, int port) {
        return tuning.apply(BackendConfiguration.builder(file).size(SIZE).port(port).credentials(credentials)
                .maxFrontends(4).semRingCapacity(1L << 20).redoRingCapacity(4L << 20))
                .conclude();
    }

    /** Copies a closed image, adding {@code epochBump} to its superblock epoch (what promotion does). */
    static void copyImage(Path from, Path to, long epochBump) {
        try {
            Files.copy(from, to);
            if (epochBump != 0) {
                bumpEpoch(to, epochBump);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static void bumpEpoch(Path file, long bump) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ByteBuffer b = ByteBuffer.allocate(SuperblockLayout.LENGTH);
            ch.read(b, 0);
            SuperblockLayout.Superblock sb = SuperblockLayout.decode(b.array(), file.toString(), ch.size());
            SuperblockLayout.Superblock bumped = new SuperblockLayout.Superblock(sb.pageSize(), sb.fileSize(),
                    sb.slabSize(), sb.slabCount(), sb.maxFrontends(), sb.slabTableOffset(), sb.logAreaOffset(),
                    sb.logAreaStride(), sb.semRingCapacity(), sb.redoRingCapacity(), sb.heapOffset(),
                    sb.epoch() + bump, sb.identity(), sb.createdMillis());
            ch.write(ByteBuffer.wrap(SuperblockLayout.encode(bumped)), 0);
        }
    }

    /** Stops mirror {@code i}'s node (its frontends see their connections drop). */
    void stopMirror(int i) {
        mirrors.get(i).close();
    }

    /** Starts mirror {@code i}'s node again on its file and port. */
    void startMirrorAgain(int i, int port) {
        mirrors.set(i, BackendNode.start(config(mirrorFiles.get(i), port)));
    }

    FrontendOptions.Builder options() {
        return FrontendOptions.builder().credentials(credentials);
    }

    Path credentials() {
        return credentials;
    }

    /** From now on {@link #fabric} reaches nodes over the in-process {@code local} fabric. */
    MirrorCluster overLocal() {
        local = true;
        return this;
    }

    /** A new TCP fabric to {@code node} (closed with the cluster), or its local fabric after {@link #overLocal}. */
    Fabric fabric(BackendNode node) {
        if (local) {
            return node.localFabric();
        }
        Fabric f = new TcpFabric("127.0.0.1", node.port(), null);
        fabrics.add(f);
        return f;
    }

    Fabric backendFabric() {
        return fabric(backend);
    }

    List<Fabric> mirrorFabrics() {
        List<Fabric> out = new ArrayList<>();
        for (BackendNode m : mirrors) {
            out.add(fabric(m));
        }
        return out;
    }

    /** The bytes of frontend {@code frontendId}'s semantic ring in {@code file} (read through the page cache). */
    static byte[] semanticRing(Path file, int frontendId) {
        return area(file, frontendId, true);
    }

    /** The id of the last of the records laid out from ring offset 0 in {@code file} (0 if none), read as posted. */
    static long lastPostedTxId(Path file, int frontendId) {
        ByteBuffer b = ByteBuffer.wrap(semanticRing(file, frontendId)).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        long last = 0;
        int at = 0;
        while (at + io.asymnvm.core.layout.SemanticRecordLayout.HEADER_LENGTH <= b.capacity()) {
            int length = b.getInt(at + io.asymnvm.core.layout.LogRecordLayout.LENGTH_OFFSET);
            long txId = b.getLong(at + io.asymnvm.core.layout.SemanticRecordLayout.TX_ID_OFFSET);
            if (length <= 0 || txId != last + 1) {
                return last;
            }
            last = txId;
            at += io.asymnvm.core.layout.LogRecordLayout.alignedLength(length);
        }
        return last;
    }

    /** The durable semantic watermark (stamped by FLUSHes) of frontend {@code frontendId} in {@code file}. */
    static long durableSemTail(Path file, int frontendId) {
        byte[] block = area(file, frontendId, false);
        return ByteBuffer.wrap(block).order(java.nio.ByteOrder.LITTLE_ENDIAN)
                .getLong(ControlBlockLayout.DURABLE_SEM_TAIL_OFFSET);
    }

    private static byte[] area(Path file, int frontendId, boolean ring) {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            ByteBuffer head = ByteBuffer.allocate(SuperblockLayout.LENGTH);
            ch.read(head, 0);
            SuperblockLayout.Superblock sb = SuperblockLayout.decode(head.array(), file.toString(), ch.size());
            long offset = ring ? sb.semRingOf(frontendId) : sb.controlBlockOf(frontendId);
            ByteBuffer b = ByteBuffer.allocate(ring ? (int) sb.semRingCapacity() : ControlBlockLayout.READ_LENGTH);
            ch.read(b, offset);
            return b.array();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    Path dir() {
        return dir;
    }

    @Override
    public void close() {
        for (Fabric f : fabrics) {
            f.close();
        }
        for (BackendNode m : mirrors) {
            m.close();
        }
        backend.close();
    }
}
