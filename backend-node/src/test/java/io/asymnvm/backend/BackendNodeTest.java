package io.asymnvm.backend;

import io.asymnvm.backend.image.PmImage;
import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.CorruptRecordException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.fabric.FabricConnection;
import io.asymnvm.core.fabric.tcp.TcpFabric;
import io.asymnvm.core.layout.ControlMessageLayout.AttachReply;
import io.asymnvm.core.layout.SuperblockLayout;
import io.asymnvm.core.layout.SuperblockLayout.Superblock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32C;

import static io.asymnvm.backend.BackendFixture.attach;
import static io.asymnvm.backend.BackendFixture.config;
import static io.asymnvm.backend.BackendFixture.lockFile;
import static io.asymnvm.backend.BackendFixture.markFile;
import static io.asymnvm.backend.BackendFixture.start;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(60)
class BackendNodeTest {
    @TempDir
    Path dir;

    private Path pm() {
        return dir.resolve("node.pm");
    }

    private static void assertContains(String message, String... fragments) {
        for (String f : fragments) {
            assertTrue(message.contains(f), "message '" + message + "' should contain '" + f + "'");
        }
    }

    private void formatAndClose() {
        start(pm()).close();
    }

    @Test
    void shouldNameAMissingDirectoryInsteadOfFailingOnTheLockFile() {
        Path missing = dir.resolve("no-such-dir").resolve("backend.pm");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> BackendNode.start(BackendConfiguration.builder(missing).conclude()));
        assertTrue(e.getMessage().contains("directory " + missing.getParent() + " of PM file backend.pm does not "
                + "exist"), e.getMessage());
    }

    @Test
    void shouldFormatAFreshFile() throws IOException {
        try (BackendNode node = start(pm())) {
            assertTrue(Files.exists(pm()));
            assertEquals(BackendFixture.SIZE, Files.size(pm()));
            Superblock sb = node.superblock();
            assertEquals(sb, PmImage.readSuperblock(pm()), "superblock persisted before serving");
            assertEquals(BackendFixture.PAGE, sb.pageSize());
            assertEquals(BackendFixture.SLAB, sb.slabSize());
            assertEquals(BackendFixture.SLABS, sb.slabCount());
            assertEquals(BackendFixture.FRONTENDS, sb.maxFrontends());
            assertEquals(BackendFixture.RING, sb.semRingCapacity());
            assertEquals(BackendFixture.RING, sb.redoRingCapacity());
            assertTrue(node.previousShutdownClean(), "a new image has no unclean past");
            assertTrue(Files.exists(markFile(pm())), "mark file exists while the node runs");
            assertEquals(-1, node.port());
            assertEquals("local", node.localFabric().name());
        }
        assertFalse(Files.exists(markFile(pm())), "clean close removes the mark file");
    }

    @Test
    void shouldReopenAnExistingImageAfterACleanClose() {
        Superblock first;
        try (BackendNode node = start(pm())) {
            first = node.superblock();
        }
        try (BackendNode node = start(pm())) {
            assertEquals(first, node.superblock(), "same identity and geometry");
            assertTrue(node.previousShutdownClean());
        }
    }

    @Test
    void shouldKeepTheImageGeometryWhenReopenedWithAnotherSize() {
        formatAndClose();
        try (BackendNode node = BackendNode.start(config(pm()).size(4 * BackendFixture.SIZE).conclude())) {
            assertEquals(BackendFixture.SIZE, node.superblock().fileSize());
        }
    }

    @Test
    void shouldReportAnUncleanShutdownWhenTheMarkFileRemains() throws IOException {
        formatAndClose();
        Files.writeString(markFile(pm()), "running pid 1\n");
        try (BackendNode node = start(pm())) {
            assertFalse(node.previousShutdownClean());
        }
        try (BackendNode node = start(pm())) {
            assertTrue(node.previousShutdownClean(), "the close after recovery was clean");
        }
    }

    @Test
    void shouldBeIdempotentToClose() {
        BackendNode node = start(pm());
        node.close();
        node.close();
        assertFalse(Files.exists(markFile(pm())));
    }

    @Test
    void shouldRefuseCorruptSuperblockMagicNamingFileAndOffset() throws IOException {
        formatAndClose();
        BackendFixture.flipByte(pm(), SuperblockLayout.MAGIC_OFFSET + 3);
        byte[] before = Files.readAllBytes(pm());
        CorruptRecordException e = assertThrows(CorruptRecordException.class, () -> start(pm()));
        assertEquals(ErrorCode.CORRUPT_RECORD, e.errorCode());
        assertEquals(pm().toAbsolutePath().toString(), e.where());
        assertEquals(SuperblockLayout.MAGIC_OFFSET, e.offset());
        assertContains(e.getMessage(), pm().toString(), "offset 0", "superblock magic",
                "expected 0x" + Long.toHexString(SuperblockLayout.MAGIC));
        assertArrayEquals(before, Files.readAllBytes(pm()), "a refused image is never reformatted");
        assertFalse(Files.exists(markFile(pm())));
    }

    @Test
    void shouldRefuseSuperblockWithBrokenCrcNamingStoredAndComputed() {
        formatAndClose();
        int stored = BackendFixture.readInt(pm(), SuperblockLayout.CRC_OFFSET);
        BackendFixture.flipByte(pm(), SuperblockLayout.CREATED_OFFSET);
        byte[] sb = BackendFixture.readFile(pm(), 0, SuperblockLayout.CRC_OFFSET);
        CRC32C crc = new CRC32C();
        crc.update(sb);
        CorruptRecordException e = assertThrows(CorruptRecordException.class, () -> start(pm()));
        assertEquals(SuperblockLayout.CRC_OFFSET, e.offset());
        assertContains(e.getMessage(), pm().toString(), "offset " + SuperblockLayout.CRC_OFFSET, "crc32c",
                "expected 0x" + Integer.toHexString(stored), "actual 0x" + Long.toHexString(crc.getValue()));
    }

    @Test
    void shouldRefuseAnotherFormatVersionBeforeCheckingTheCrc() {
        formatAndClose();
        BackendFixture.patchInt(pm(), SuperblockLayout.VERSION_OFFSET, SuperblockLayout.FORMAT_VERSION + 1);
        AsymNvmException e = assertThrows(AsymNvmException.class, () -> start(pm()));
        assertEquals(ErrorCode.FORMAT_VERSION_MISMATCH, e.errorCode(), e.getMessage());
        assertFalse(e instanceof CorruptRecordException, "the stale CRC is not what gets reported");
        assertContains(e.getMessage(), pm().toString(), "version " + (SuperblockLayout.FORMAT_VERSION + 1),
                "version " + SuperblockLayout.FORMAT_VERSION);
    }

    @Test
    void shouldRefuseAnotherFormatVersionWithAValidCrcNamingBothVersions() {
        formatAndClose();
        BackendFixture.patchInt(pm(), SuperblockLayout.VERSION_OFFSET, 7);
        CRC32C crc = new CRC32C();
        crc.update(BackendFixture.readFile(pm(), 0, SuperblockLayout.CRC_OFFSET));
        BackendFixture.patchInt(pm(), SuperblockLayout.CRC_OFFSET, (int) crc.getValue());
        AsymNvmException e = assertThrows(AsymNvmException.class, () -> start(pm()));
        assertEquals(ErrorCode.FORMAT_VERSION_MISMATCH, e.errorCode());
        assertContains(e.getMessage(), "format version 7", "reads version " + SuperblockLayout.FORMAT_VERSION);
    }

    @Test
    void shouldRefuseASlabOwnerWordThatNamesNoFrontend() {
        Superblock sb;
        try (BackendNode node = start(pm())) {
            sb = node.superblock();
        }
        long entry = io.asymnvm.core.layout.SlabTableLayout.entryOffset(sb.slabTableOffset(), 3);
        for (long word : new long[] {(1L << 32) + 1, -1L, BackendFixture.FRONTENDS + 1L}) {
            BackendFixture.patchFile(pm(), entry,
                    ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(word).array());
            CorruptRecordException e = assertThrows(CorruptRecordException.class, () -> start(pm()),
                    "owner word 0x" + Long.toHexString(word));
            assertEquals(entry, e.offset());
            assertContains(e.getMessage(), pm().toString(), "actual 0x" + Long.toHexString(word));
        }
        BackendFixture.patchFile(pm(), entry, new byte[8]);
        start(pm()).close();
    }

    @Test
    void shouldRefuseAFileShorterThanASuperblock() throws IOException {
        Files.write(pm(), "not a PM image".getBytes(StandardCharsets.US_ASCII));
        CorruptRecordException e = assertThrows(CorruptRecordException.class, () -> start(pm()));
        assertContains(e.getMessage(), pm().toString(), "file length");
        assertEquals(14, Files.size(pm()), "left as it was");
    }

    @Test
    void shouldRefuseAnImageWhoseFileWasTruncated() throws IOException {
        formatAndClose();
        try (var ch = java.nio.channels.FileChannel.open(pm(), java.nio.file.StandardOpenOption.WRITE)) {
            ch.truncate(BackendFixture.SIZE / 2);
        }
        CorruptRecordException e = assertThrows(CorruptRecordException.class, () -> start(pm()));
        assertEquals(SuperblockLayout.FILE_SIZE_OFFSET, e.offset());
        assertContains(e.getMessage(), "file size", Long.toHexString(BackendFixture.SIZE));
    }

    @Test
    void shouldFormatAnEmptyExistingFile() throws IOException {
        Files.createFile(pm());
        try (BackendNode node = start(pm())) {
            assertEquals(BackendFixture.SIZE, Files.size(pm()));
            assertEquals(BackendFixture.SLABS, node.superblock().slabCount());
        }
    }

    @Test
    void shouldRefuseATooSmallSizeBeforeCreatingAnything() {
        long tooSmall = 320L << 10;
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> BackendNode.start(config(pm()).size(tooSmall).conclude()));
        assertContains(e.getMessage(), "PM size too small", String.valueOf(tooSmall), "393216");
        assertFalse(Files.exists(pm()), "no PM file");
        assertFalse(Files.exists(lockFile(pm())), "no lock file");
        assertFalse(Files.exists(markFile(pm())), "no mark file");
    }

    @Test
    void shouldAcceptTheMinimumSize() {
        try (BackendNode node = BackendNode.start(config(pm()).size(393216).conclude())) {
            assertEquals(1, node.superblock().slabCount());
        }
    }

    @Test
    void shouldRefuseAPortInUseBeforeCreatingThePmFile() throws IOException {
        try (ServerSocket taken = new ServerSocket()) {
            taken.bind(new InetSocketAddress(InetAddress.getByName("127.0.0.1"), 0));
            int port = taken.getLocalPort();
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> BackendNode.start(config(pm()).port(port).conclude()));
            assertContains(e.getMessage(), "port " + port, "127.0.0.1", "not available");
            assertFalse(Files.exists(pm()), "PM file neither created nor mapped");
            assertFalse(Files.exists(lockFile(pm())));
        }
    }

    @Test
    void shouldRefuseAnUnbindableHostBeforeCreatingThePmFileEvenOnPortZero() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> BackendNode.start(config(pm()).port(0).bindHost("192.0.2.1").conclude()));
        assertContains(e.getMessage(), "192.0.2.1", "not available");
        assertFalse(Files.exists(pm()), "PM file neither created nor mapped");
        assertFalse(Files.exists(lockFile(pm())));
    }

    @Test
    void shouldServeOverTcpOnAFreePort() {
        try (BackendNode node = BackendNode.start(config(pm()).port(0).conclude());
             TcpFabric fabric = new TcpFabric("127.0.0.1", node.port());
             FabricConnection c = fabric.connect()) {
            assertTrue(node.port() > 0);
            AttachReply reply = attach(node, c, 1);
            assertEquals(BackendFixture.PAGE, reply.pageSize());
            assertEquals(BackendFixture.SLABS * BackendFixture.SLAB, reply.heapSize());
            long[] slab = BackendFixture.grantSlab(c);
            assertEquals(slab[0] * BackendFixture.SLAB, slab[1]);
        }
    }

    @Test
    void shouldRefuseASecondNodeOnTheSameFileAndKeepTheFirstServing() {
        try (BackendNode first = start(pm())) {
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> start(pm()));
            assertContains(e.getMessage(), "in use", pm().toString());
            assertTrue(Files.exists(markFile(pm())), "the first node's mark file is untouched");
            try (FabricConnection c = first.localFabric().connect()) {
                assertEquals(0, attach(c, 0).appliedTxId());
            }
            assertThrows(IllegalStateException.class, () -> start(pm()), "still refused on a second try");
        }
        try (BackendNode again = start(pm())) {
            assertTrue(again.previousShutdownClean());
        }
    }

    @Test
    void shouldKeepTheFileLockedForOtherProcessesAfterARefusedSecondStart() throws Exception {
        BackendNode first = start(pm());
        try {
            assertEquals("LOCKED", probeLock(), "a running node holds the OS lock");
            assertThrows(IllegalStateException.class, () -> start(pm()));
            assertEquals("LOCKED", probeLock(), "a refused second start must not release the first node's lock");
        } finally {
            first.close();
        }
        assertEquals("FREE", probeLock(), "released on close");
    }

    /** Asks a child JVM whether the lock file is locked (fcntl locks are per process). */
    private String probeLock() throws Exception {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Path classes = Path.of(LockProbe.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        Process p = new ProcessBuilder(java.toString(), "-cp", classes.toString(), LockProbe.class.getName(),
                lockFile(pm()).toAbsolutePath().toString()).redirectErrorStream(true).start();
        assertTrue(p.waitFor(30, TimeUnit.SECONDS), "lock probe finished");
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        assertEquals(0, p.exitValue(), out);
        return out;
    }

    @Test
    void shouldReadTheSuperblockOfAnImageWithoutMappingIt() {
        formatAndClose();
        Superblock sb = PmImage.readSuperblock(pm());
        assertEquals(BackendFixture.SIZE, sb.fileSize());
        byte[] raw = BackendFixture.readFile(pm(), 0, SuperblockLayout.LENGTH);
        assertEquals(SuperblockLayout.MAGIC, ByteBuffer.wrap(raw).order(ByteOrder.LITTLE_ENDIAN).getLong());
        assertInstanceOf(Superblock.class, SuperblockLayout.decode(raw, "x", BackendFixture.SIZE));
    }

    @Test
    void shouldServeTheEmbeddedBackendThroughTheServiceLoader() {
        io.asymnvm.core.fabric.EmbeddedBackend.Factory factory = io.asymnvm.core.fabric.EmbeddedBackend.factory();
        assertInstanceOf(EmbeddedBackendFactory.class, factory);
        Path sub = dir.resolve("embedded");
        try (io.asymnvm.core.fabric.EmbeddedBackend backend = factory.open(sub, BackendConfiguration.DEFAULT_SIZE)) {
            assertTrue(Files.exists(sub.resolve(EmbeddedBackendFactory.PM_FILE)));
            try (FabricConnection c = backend.fabric().connect()) {
                assertEquals(0, attach(c, 0).appliedTxId());
            }
            backend.awaitReplayed();
        }
    }
}
