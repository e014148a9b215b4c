package io.asymnvm.frontend;

import io.asymnvm.testsupport.ShmTempDirFactory;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Coherence check mode ({@link FrontendOptions.Builder#verifyCache}): a clean cached page that differs from the
 * backend image is found at the next checkpoint, sweep or fetch that covers it, and named as a
 * {@link CacheIncoherentException} (frontend, page, offset, bytes, transaction ids). The backend image is changed
 * behind the frontend's back by writing the PM file directly (the backend maps it shared), which is exactly the
 * kind of divergence a stale cached page produces.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class CacheCoherenceTest {
    private static final int PAGE = 4096;

    /** No redo shipped in the background: a write reaches the backend only when the test calls sync(). */
    private static FrontendOptions verifying(int readAhead) {
        return FrontendOptions.builder()
                .verifyCache(true)
                .readAheadPages(readAhead)
                .redoBatch(1 << 20, 16 << 20, 10_000_000)
                .conclude();
    }

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    /** First page-aligned heap address inside a fresh three-page block. */
    private static long pageInBlock(Heap heap) {
        long block = heap.allocate(3L * PAGE);
        return block + Math.floorMod(-block, PAGE);
    }

    /** Overwrites one byte of the backend's image of heap address {@code address}, bypassing every protocol. */
    private void injectBehindTheFrontend(TestBackend backend, long address, byte value) throws IOException {
        long fileOffset = backend.node().superblock().slabOffset(0) + address;
        try (FileChannel ch = FileChannel.open(dir.resolve("backend.pm"), StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.wrap(new byte[] {value}), fileOffset);
        }
    }

    @ParameterizedTest
    @EnumSource(TestBackend.Transport.class)
    void shouldNameAPageThatDivergesWhenItsCheckpointArrives(TestBackend.Transport transport) throws IOException {
        try (TestBackend backend = TestBackend.start(dir, transport);
             AsymNvm nvm = backend.open(0, verifying(1))) {
            Heap heap = nvm.transactional(Heap.class, new Heap.Impl());
            long a = pageInBlock(heap);
            heap.writeLongAt(a, 1);
            nvm.sync(); // a's page is applied and clean: verified equal, no complaint
            heap.writeLongAt(a, 2); // dirty again; its redo covers [a, a + 8) only
            injectBehindTheFrontend(backend, a + 8, (byte) 0x5A);

            CacheIncoherentException e = assertThrows(CacheIncoherentException.class, nvm::sync);
            assertEquals(0, e.frontendId());
            assertEquals(a / PAGE, e.pageIndex());
            assertEquals(8, e.offset(), "first differing byte");
            assertTrue(e.lastWriterTxId() > 0 && e.lastWriterTxId() <= e.appliedTxId(), e.getMessage());
            assertTrue(e.getMessage().contains("after checkpoint"), e.getMessage());
            assertTrue(e.getMessage().contains("backend 0x5a"), e.getMessage());

            assertThrows(CacheIncoherentException.class, () -> heap.readLongAt(a), "the frontend stopped");
        }
    }

    @ParameterizedTest
    @EnumSource(TestBackend.Transport.class)
    void shouldFindADivergedCleanPageInTheSyncSweep(TestBackend.Transport transport) throws IOException {
        try (TestBackend backend = TestBackend.start(dir, transport);
             AsymNvm nvm = backend.open(0, verifying(1))) {
            Heap heap = nvm.transactional(Heap.class, new Heap.Impl());
            long a = pageInBlock(heap);
            heap.writeLongAt(a, 7);
            nvm.sync();
            injectBehindTheFrontend(backend, a + 100, (byte) 0x33);

            CacheIncoherentException e = assertThrows(CacheIncoherentException.class, nvm::sync);
            assertEquals(a / PAGE, e.pageIndex());
            assertEquals(100, e.offset());
            assertTrue(e.getMessage().contains("sweep"), e.getMessage());
        }
    }

    @ParameterizedTest
    @EnumSource(TestBackend.Transport.class)
    void shouldFindADivergedCleanPageWhenAFetchReadsItAgain(TestBackend.Transport transport) throws IOException {
        long a;
        try (TestBackend backend = TestBackend.start(dir, transport)) {
            try (AsymNvm nvm = backend.open(0, verifying(1))) {
                Heap heap = nvm.transactional(Heap.class, new Heap.Impl());
                a = pageInBlock(heap);
                heap.writeLongAt(a, 1);
                heap.writeLongAt(a + PAGE, 2);
            }
            try (AsymNvm nvm = backend.open(0, verifying(2))) { // fresh cache, read-ahead of two pages
                Heap heap = nvm.transactional(Heap.class, new Heap.Impl());
                assertEquals(2, heap.readLongAt(a + PAGE)); // caches pages a+1 and a+2
                injectBehindTheFrontend(backend, a + PAGE + 24, (byte) 0x11);
                // a miss of page a reads [a, a+1]: page a+1 is cached clean and must equal what was read
                CacheIncoherentException e = assertThrows(CacheIncoherentException.class,
                        () -> heap.readLongAt(a));
                assertEquals(a / PAGE + 1, e.pageIndex());
                assertEquals(24, e.offset());
                assertTrue(e.getMessage().contains("on a fetch"), e.getMessage());
            }
        }
    }

    @ParameterizedTest
    @EnumSource(TestBackend.Transport.class)
    void shouldStaySilentWhenCacheAndBackendAgree(TestBackend.Transport transport) {
        try (TestBackend backend = TestBackend.start(dir, transport);
             AsymNvm nvm = backend.open(0, verifying(4))) {
            Heap heap = nvm.transactional(Heap.class, new Heap.Impl());
            long[] blocks = new long[200];
            for (int i = 0; i < blocks.length; i++) {
                blocks[i] = heap.allocateFilled(1 + (i * 977L) % 9000, i);
                if (i % 50 == 49) {
                    nvm.sync();
                }
            }
            nvm.sync();
            for (int i = 0; i < blocks.length; i++) {
                int length = (int) (1 + (i * 977L) % 9000);
                assertEquals(java.util.Arrays.toString(Heap.pattern(i, length)),
                        java.util.Arrays.toString(heap.readBytes(blocks[i], length)), "block " + i);
            }
            assertTrue(nvm.stats().verifyRoundTrips() > 0, "the checks ran: " + nvm.stats());
        }
    }
}
