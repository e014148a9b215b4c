package io.asymnvm.rdma;

import com.ibm.disni.verbs.RdmaProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.DisabledIf;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The probe on a host without libdisni (this build machine: no RDMA in the kernel, no native library). Disabled
 * where the probe succeeds, i.e. on a host with libdisni and a device, where {@link RdmaFabricContractTest} runs.
 */
@Timeout(30)
@DisabledIf("io.asymnvm.rdma.RdmaProbe#isAvailable")
class RdmaProbeTest {

    @TempDir
    Path dir;

    @Test
    void shouldReportUnavailableWithTheMissingLibraryAndNeverThrow() {
        RdmaProbe.Result r = RdmaProbe.probe();
        assertFalse(r.available());
        assertTrue(r.reason().contains("libdisni not found on java.library.path"), r.reason());
        assertTrue(r.reason().contains(System.getProperty("java.library.path")), r.reason());
        assertSame(r, RdmaProbe.probe(), "probed once per JVM, then cached");
        assertFalse(RdmaProbe.isAvailable());
    }

    @Test
    void shouldKeepNamingTheLibraryAfterDisniTurnsToNoClassDefFoundError() {
        RdmaProbe.probe();
        // DiSNI's own behaviour, the reason the probe exists: the first call fails to link, later ones cannot
        // initialise the class any more; either way a LinkageError, never an exception a caller would expect
        LinkageError direct = assertThrows(LinkageError.class, RdmaProvider::provider);
        assertTrue(direct instanceof NoClassDefFoundError, "after the first probe DiSNI throws " + direct);
        for (int i = 0; i < 3; i++) {
            RdmaProbe.Result again = RdmaProbe.probeNow(dir);
            assertFalse(again.available());
            assertTrue(again.reason().contains("libdisni not found on java.library.path"), again.reason());
        }
    }

    @Test
    void shouldNameAMissingDeviceDirectoryAndListDevicesThatExist() throws Exception {
        Path absent = dir.resolve("no-such-class-dir");
        RdmaProbe.Result none = RdmaProbe.probeNow(absent);
        assertTrue(none.reason().contains("no RDMA device: " + absent + " is absent or empty"), none.reason());
        assertEquals(List.of(), none.devices());

        Path sys = Files.createDirectories(dir.resolve("infiniband"));
        Files.createDirectory(sys.resolve("mlx5_1"));
        Files.createDirectory(sys.resolve("mlx5_0"));
        RdmaProbe.Result some = RdmaProbe.probeNow(sys);
        assertEquals(List.of("mlx5_0", "mlx5_1"), some.devices());
        assertFalse(some.available(), "a device without libdisni is still unusable");
        assertFalse(some.reason().contains("no RDMA device"), some.reason());
        assertTrue(some.reason().contains("libdisni"), some.reason());
    }
}
