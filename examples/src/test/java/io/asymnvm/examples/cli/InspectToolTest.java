package io.asymnvm.examples.cli;

import io.asymnvm.backend.EmbeddedBackendFactory;
import io.asymnvm.backend.InspectReport;
import io.asymnvm.backend.InspectTool;
import io.asymnvm.core.layout.LogRecordLayout;
import io.asymnvm.core.layout.SemanticRecordLayout;
import io.asymnvm.examples.bank.Bank;
import io.asymnvm.examples.bank.BankImpl;
import io.asymnvm.frontend.AsymNvm;
import io.asymnvm.frontend.FrontendOptions;
import io.asymnvm.testsupport.PmFiles;
import io.asymnvm.testsupport.ShmTempDirFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.util.zip.CRC32C;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code asymnvm inspect}: dumps a used image, names corruption, refuses non-images, never writes. */
@Timeout(60)
class InspectToolTest {
    private static final long PM_SIZE = 192L << 20;
    private static final int TRANSFERS = 10;
    /** Keeps every transaction's redo in the frontend, so a crash leaves semantic records after the checkpoint. */
    private static final FrontendOptions UNAPPLIED = FrontendOptions.builder().embeddedSizeBytes(PM_SIZE)
            .redoBatch(1 << 20, 16 << 20, 10_000_000).conclude();

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    private int inspect(Path pm, String... extra) {
        String[] args = new String[2 + extra.length + 1];
        args[0] = "inspect";
        args[1] = "--pm";
        args[2] = pm.toString();
        System.arraycopy(extra, 0, args, 3, extra.length);
        return CliFixture.executeAsMain(out, err, args);
    }

    private Path pm() {
        return dir.resolve(EmbeddedBackendFactory.PM_FILE);
    }

    /** A bank with {@code TRANSFERS} applied transfers: applied tx = 1 (open) + TRANSFERS. */
    private void usedImage() {
        try (AsymNvm nvm = AsymNvm.embedded(dir, FrontendOptions.builder().embeddedSizeBytes(PM_SIZE).conclude())) {
            Bank bank = nvm.transactional(Bank.class, new BankImpl());
            bank.open(8, 1000);
            for (int i = 0; i < TRANSFERS; i++) {
                bank.transfer(i % 8, (i + 1) % 8, 10);
            }
        }
    }

    /** A crashed frontend's image: the bank applied, then {@code TRANSFERS} semantic records durable but unapplied. */
    private void crashedImage() {
        AsymNvm nvm = AsymNvm.embedded(dir, UNAPPLIED);
        Bank bank = nvm.transactional(Bank.class, new BankImpl());
        bank.open(8, 1000);
        nvm.sync();
        for (int i = 0; i < TRANSFERS; i++) {
            bank.transfer(i % 8, (i + 1) % 8, 10);
        }
        nvm.crash();
    }

    @Test
    void shouldDumpAFreshlyUsedImageAndShowTheAppliedTransaction() throws IOException {
        usedImage();
        long crcBefore = crc(pm());
        FileTime modified = Files.getLastModifiedTime(pm());

        assertEquals(0, inspect(pm()), out + "\n" + err);
        String text = out.toString();
        assertTrue(text.contains("applied tx " + (TRANSFERS + 1)), text);
        assertTrue(text.contains("frontend 0: detached"), text);
        assertTrue(text.contains("frontend 0 owns 1"), text);
        assertTrue(text.contains("check: OK"), text);
        assertEquals("", err.toString());

        out.getBuffer().setLength(0);
        assertEquals(0, inspect(pm(), "--json"), err.toString());
        String json = out.toString().strip();
        assertTrue(json.startsWith("{") && json.endsWith("}") && json.lines().count() == 1, json);
        assertTrue(json.contains("\"applied_tx\":" + (TRANSFERS + 1)), json);
        assertTrue(json.contains("\"ok\":true"), json);

        assertEquals(crcBefore, crc(pm()), "inspect changed the image");
        assertEquals(modified, Files.getLastModifiedTime(pm()));
        assertFalse(Files.exists(dir.resolve(EmbeddedBackendFactory.PM_FILE + ".mark")), "inspect wrote a mark file");
    }

    @Test
    void shouldCountTheUnappliedSemanticRecordsOfACrashedFrontend() {
        crashedImage();
        InspectReport r = InspectTool.inspect(pm());
        assertTrue(r.ok(), r.problems().toString());
        InspectReport.Ring sem = r.frontends().get(0).semantic();
        assertEquals(1, r.checkpoint(0).appliedTxId());
        assertEquals(TRANSFERS, sem.records());
        assertEquals(2, sem.firstTxId());
        assertEquals(TRANSFERS + 1, sem.lastTxId());
        assertEquals(sem.validTail(), r.frontends().get(0).durableSemTail(), "every record was acknowledged");
        assertEquals(0, r.frontends().get(0).redo().records(), "no redo was shipped");
    }

    @Test
    void shouldNameTheOffsetOfACorruptRecordBeforeTheDurableWatermark() throws IOException {
        crashedImage();
        InspectReport.Ring sem = InspectTool.inspect(pm()).frontends().get(0).semantic();
        long first = sem.offset() + Math.floorMod(sem.head(), sem.capacity());
        long second = first
                + LogRecordLayout.alignedLength(PmFiles.readInt(pm(), first + LogRecordLayout.LENGTH_OFFSET));
        PmFiles.flipByte(pm(), second + SemanticRecordLayout.HEADER_LENGTH);
        long crcBefore = crc(pm());

        assertEquals(1, inspect(pm()), out + "\n" + err);
        String message = err.toString();
        assertTrue(message.contains("semantic ring of frontend 0 at offset " + second), message);
        assertTrue(message.contains("crc32c") && message.contains("expected 0x") && message.contains("actual 0x"),
                message);
        assertTrue(message.contains(pm().toAbsolutePath().toString()), message);
        assertTrue(out.toString().contains("check: FAILED"), out.toString());
        assertEquals(crcBefore, crc(pm()), "inspect changed the image");
    }

    @Test
    void shouldRefuseATruncatedFile() throws IOException {
        usedImage();
        Path truncated = dir.resolve("truncated.pm");
        try (FileChannel in = FileChannel.open(pm()); FileChannel o = FileChannel.open(truncated,
                StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            in.transferTo(0, PM_SIZE / 2, o);
        }
        assertEquals(1, inspect(truncated), err.toString());
        String message = err.toString();
        assertTrue(message.contains("truncated") && message.contains(truncated.toAbsolutePath().toString())
                && message.contains(Long.toString(PM_SIZE)) && message.contains(Long.toString(PM_SIZE / 2)), message);
        assertEquals(1, message.strip().lines().count(), message);
        assertEquals("", out.toString());
    }

    @Test
    void shouldRefuseAnImageWhoseFormattingNeverCompleted() throws IOException {
        usedImage();
        try (FileChannel ch = FileChannel.open(pm(), StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.allocate(8), 0); // the magic is written last when formatting
        }
        assertEquals(1, inspect(pm()));
        String message = err.toString();
        assertTrue(message.contains("superblock magic") && message.contains("zero magic"), message);
        assertEquals("", out.toString());
    }

    @Test
    void shouldRefuseZeroedTinyAndMissingFiles() throws IOException {
        Path zeroed = dir.resolve("zeroed.pm");
        Files.write(zeroed, new byte[1 << 20]);
        assertEquals(1, inspect(zeroed));
        assertTrue(err.toString().contains("all zeros"), err.toString());

        err.getBuffer().setLength(0);
        Path tiny = dir.resolve("tiny.pm");
        Files.write(tiny, new byte[] {1, 2, 3});
        assertEquals(1, inspect(tiny));
        assertTrue(err.toString().contains("3 bytes") && err.toString().contains("truncated"), err.toString());

        err.getBuffer().setLength(0);
        assertEquals(1, inspect(dir.resolve("missing.pm")));
        assertTrue(err.toString().contains("does not exist"), err.toString());
        assertEquals("", out.toString());
    }

    @Test
    void shouldInspectBesideARunningBackend() {
        try (AsymNvm nvm = AsymNvm.embedded(dir, FrontendOptions.builder().embeddedSizeBytes(PM_SIZE).conclude())) {
            Bank bank = nvm.transactional(Bank.class, new BankImpl());
            bank.open(8, 1000);
            bank.transfer(0, 1, 5);
            assertEquals(0, inspect(pm()), out + "\n" + err);
            assertTrue(out.toString().contains("mark file: present"), out.toString());
            assertTrue(out.toString().contains("frontend 0: attached"), out.toString());
            bank.transfer(1, 2, 5); // the backend was not disturbed
            assertEquals(8000, bank.total());
        }
    }

    private static long crc(Path file) {
        try (FileChannel ch = FileChannel.open(file)) {
            CRC32C c = new CRC32C();
            ByteBuffer b = ByteBuffer.allocateDirect(1 << 20);
            while (ch.read(b) > 0) {
                b.flip();
                c.update(b);
                b.clear();
            }
            return c.getValue();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
