package io.asymnvm.core.fabric;

import io.asymnvm.core.ErrorCode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Selection by name in core alone (the rdma module is not on this class path). */
@Timeout(30)
class FabricProvidersTest {

    @Test
    void shouldFindLocalAndTcpThroughTheServiceLoader() {
        assertEquals("tcp", FabricProviders.find("tcp").name());
        assertEquals("local", FabricProviders.find("local").name());
        assertNull(FabricProviders.find("rdma"), "rdma lives in its own module");
        FabricProviders.Selection s = FabricProviders.select("TCP", true);
        assertFalse(s.fellBack());
        assertEquals("tcp", s.provider().name());
    }

    @Test
    void shouldFallBackFromAMissingRdmaModuleToTcpNamingTheModule() {
        FabricProviders.Selection s = FabricProviders.select("rdma", false);
        assertTrue(s.fellBack());
        assertEquals("rdma", s.requested());
        assertEquals("tcp", s.provider().name());
        assertTrue(s.fallbackReason().contains("asymnvm-rdma"), s.fallbackReason());
    }

    @Test
    void shouldRefuseAMissingRdmaModuleInStrictMode() {
        FabricUnavailableException e = assertThrows(FabricUnavailableException.class,
                () -> FabricProviders.select("rdma", true));
        assertEquals("rdma", e.fabric());
        assertEquals(ErrorCode.CONNECTION_LOST, e.errorCode());
        assertTrue(e.getMessage().contains("asymnvm-rdma"), e.getMessage());
    }

    @Test
    void shouldRejectUnknownNamesListingTheKnownOnes() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> FabricProviders.select("infiniband", false));
        assertTrue(e.getMessage().contains("infiniband") && e.getMessage().contains("local, tcp, rdma"),
                e.getMessage());
    }

    @Test
    void shouldRefuseUnknownProviderOptions() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> FabricProviders.open("tcp", true, "127.0.0.1", 7000, Map.of("depth", "4")));
        assertTrue(e.getMessage().contains("depth"), e.getMessage());
        IllegalArgumentException local = assertThrows(IllegalArgumentException.class,
                () -> FabricProviders.find("local").open("127.0.0.1", 0, Map.of()));
        assertTrue(local.getMessage().contains("dir"), local.getMessage());
    }
}
