package io.asymnvm.backend;

import io.asymnvm.core.fabric.PersistenceDomain;
import io.asymnvm.core.region.MappedRegion;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(10)
class BackendConfigurationTest {
    private static final Path PM = Path.of("never-created.pm");

    private static BackendConfiguration.Builder builder() {
        return BackendConfiguration.builder(PM);
    }

    /** Asserts the message names the offending value and every limit fragment given. */
    private static void rejects(Executable conclude, String... fragments) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, conclude);
        for (String f : fragments) {
            assertTrue(e.getMessage().contains(f), "message '" + e.getMessage() + "' should name '" + f + "'");
        }
    }

    @Test
    void shouldUseDocumentedDefaults() {
        BackendConfiguration c = builder().conclude();
        assertEquals(PM, c.pmFile());
        assertEquals(BackendConfiguration.DEFAULT_SIZE, c.size());
        assertEquals(BackendConfiguration.DEFAULT_PAGE_SIZE, c.pageSize());
        assertEquals(256, c.catalogQuota());
        assertEquals(BackendConfiguration.DEFAULT_SLAB_SIZE, c.slabSize());
        assertEquals(BackendConfiguration.DEFAULT_MAX_FRONTENDS, c.maxFrontends());
        assertEquals(BackendConfiguration.DEFAULT_SEM_RING, c.semRingCapacity());
        assertEquals(BackendConfiguration.DEFAULT_REDO_RING, c.redoRingCapacity());
        assertEquals(-1, c.port(), "embedded by default: no TCP listener");
        assertEquals("127.0.0.1", c.bindHost());
        assertEquals(MappedRegion.MapMode.FILE, c.mapMode());
        assertEquals(PersistenceDomain.ADR, c.persistenceDomain());
        assertTrue(c.ddio());
        assertTrue(c.toString().contains("size=" + BackendConfiguration.DEFAULT_SIZE), c.toString());
    }

    @Test
    void shouldBoundTheTimeAFrontendWithoutASessionHoldsAMirrorBack() {
        assertEquals(60_000, builder().conclude().frontendGoneMillis());
        assertEquals(250, builder().frontendGoneMillis(250).conclude().frontendGoneMillis());
        rejects(() -> builder().frontendGoneMillis(0).conclude(), "frontendGoneMillis", "0", "86400000");
        rejects(() -> builder().frontendGoneMillis(86_400_001).conclude(), "frontendGoneMillis", "86400001");
    }

    @Test
    void shouldRejectSizeNotAMultipleOfThePageSize() {
        rejects(() -> builder().size(1_000_000).conclude(), "PM size", "1000000", "4096");
        rejects(() -> builder().size((1L << 20) + 512).pageSize(1024).conclude(), "1049088", "1024");
    }

    @Test
    void shouldRejectNonPositiveSize() {
        rejects(() -> builder().size(0).conclude(), "PM size", ": 0");
        rejects(() -> builder().size(-4096).conclude(), "PM size", "-4096");
    }

    @ParameterizedTest
    @ValueSource(ints = {3000, 4095, 0, -4096})
    void shouldRejectPageSizeNotAPowerOfTwo(int pageSize) {
        rejects(() -> builder().pageSize(pageSize).conclude(), "page size not a power of two: " + pageSize);
    }

    @Test
    void shouldRejectPageSizeOutsideItsRange() {
        rejects(() -> builder().pageSize(256).conclude(), "page size", "256", "512");
        rejects(() -> builder().pageSize(1 << 21).conclude(), "page size", String.valueOf(1 << 21),
                String.valueOf(1 << 20));
    }

    @Test
    void shouldRejectSlabSmallerThanAPage() {
        rejects(() -> builder().catalogQuota(0).conclude(), "catalog quota per frontend", "0", "[1, 4096]");
        rejects(() -> builder().catalogQuota(4097).conclude(), "catalog quota per frontend", "4097", "[1, 4096]");
        rejects(() -> builder().slabSize(2048).conclude(), "slab size", "2048", "[4096, 1073741824]");
        rejects(() -> builder().pageSize(8192).slabSize(4096).conclude(), "slab size", "4096", "8192");
    }

    @Test
    void shouldRejectSlabSizeNotAPowerOfTwoOrTooLarge() {
        rejects(() -> builder().slabSize(3L << 20).conclude(), "slab size not a power of two: " + (3L << 20));
        rejects(() -> builder().slabSize(1L << 31).conclude(), "slab size", String.valueOf(1L << 31),
                String.valueOf(1L << 30));
    }

    @ParameterizedTest
    @ValueSource(ints = {65536, 70000, -2, Integer.MIN_VALUE})
    void shouldRejectPortOutOfRange(int port) {
        rejects(() -> builder().port(port).conclude(), "port", String.valueOf(port), "[-1, 65535]");
    }

    @ParameterizedTest
    @ValueSource(ints = {-1, 0, 1, 65535})
    void shouldAcceptPortsFromNoneToTheHighest(int port) {
        assertEquals(port, builder().port(port).conclude().port());
    }

    @ParameterizedTest
    @ValueSource(ints = {0, -1, BackendConfiguration.MAX_FRONTENDS_LIMIT + 1, Integer.MAX_VALUE})
    void shouldRejectMaxFrontendsOutOfRange(int maxFrontends) {
        rejects(() -> builder().maxFrontends(maxFrontends).conclude(), "max frontends",
                String.valueOf(maxFrontends), "[1, " + BackendConfiguration.MAX_FRONTENDS_LIMIT + "]");
    }

    @Test
    void shouldAcceptMaxFrontendsAtBothLimits() {
        assertEquals(1, builder().maxFrontends(1).conclude().maxFrontends());
        assertEquals(1024, builder().maxFrontends(1024).conclude().maxFrontends());
    }

    @Test
    void shouldRejectRingCapacitiesThatAreNotPageMultiplesOrTooSmall() {
        rejects(() -> builder().semRingCapacity(10_000).conclude(), "semantic ring capacity", "10000", "4096");
        rejects(() -> builder().redoRingCapacity(10_000).conclude(), "redo ring capacity", "10000", "4096");
        rejects(() -> builder().semRingCapacity(0).conclude(), "semantic ring capacity", ": 0");
        rejects(() -> builder().redoRingCapacity(-4096).conclude(), "redo ring capacity", "-4096");
        rejects(() -> builder().pageSize(512).semRingCapacity(128).conclude(), "semantic ring capacity", "128",
                "512");
        rejects(() -> builder().redoRingCapacity(2L << 30).conclude(), "redo ring capacity",
                String.valueOf(2L << 30), String.valueOf(1L << 30));
    }

    @ParameterizedTest
    @EnumSource(value = PersistenceDomain.class, names = {"EADR", "WHOLE_SYSTEM"})
    void shouldRejectCacheInclusivePersistenceWithoutDax(PersistenceDomain domain) {
        rejects(() -> builder().persistence(domain, true).conclude(), domain.name(), "DAX", "FILE");
        rejects(() -> builder().persistence(domain, false).mapMode(MappedRegion.MapMode.FILE).conclude(),
                domain.name(), "DAX");
    }

    @Test
    void shouldAcceptEadrWithDaxWithoutMappingAnything() {
        BackendConfiguration c = builder().mapMode(MappedRegion.MapMode.DAX)
                .persistence(PersistenceDomain.EADR, false).conclude();
        assertEquals(PersistenceDomain.EADR, c.persistenceDomain());
        assertFalse(c.ddio());
        assertFalse(java.nio.file.Files.exists(PM), "conclude() creates nothing");
    }

    @Test
    void shouldRejectNullArgumentsAtTheBuilder() {
        assertThrows(NullPointerException.class, () -> BackendConfiguration.builder(null));
        assertThrows(NullPointerException.class, () -> builder().bindHost(null));
        assertThrows(NullPointerException.class, () -> builder().mapMode(null));
        assertThrows(NullPointerException.class, () -> builder().persistence(null, true));
    }
}
