package io.asymnvm.rdma;

import io.asymnvm.backend.BackendConfiguration;
import io.asymnvm.backend.BackendNode;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.fabric.EmulatedNic;
import io.asymnvm.core.fabric.Fabric;
import io.asymnvm.core.fabric.FabricProvider;
import io.asymnvm.core.fabric.FabricProviders;
import io.asymnvm.core.fabric.FabricUnavailableException;
import io.asymnvm.core.fabric.PersistenceDomain;
import io.asymnvm.core.fabric.RegionTable;
import io.asymnvm.frontend.AsymNvm;
import io.asymnvm.frontend.FrontendOptions;
import io.asymnvm.frontend.PersistentTransaction;
import io.asymnvm.frontend.Transaction;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.DisabledIf;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Selecting {@code rdma} where it cannot run (this machine): the provider is found on the class path, reports why
 * it is unavailable, and the selection falls back to {@code tcp}, over which a frontend commits; strict mode and the
 * rdma classes themselves refuse with a typed error. Disabled on a host where the probe succeeds.
 */
@Timeout(60)
@DisabledIf("io.asymnvm.rdma.RdmaProbe#isAvailable")
class RdmaFallbackTest {

    /** A counter in the heap: the smallest thing a transaction can commit. */
    public interface Counter {
        @PersistentTransaction
        void add(long delta);

        @PersistentTransaction(readOnly = true)
        long get();
    }

    static final class CounterImpl implements Counter {
        @Override
        public void add(long delta) {
            Transaction tx = Transaction.current();
            long root = tx.root();
            if (root == 0) {
                root = tx.allocate(8);
                tx.writeLong(root, 0);
                tx.setRoot(root);
            }
            tx.writeLong(root, tx.readLong(root) + delta);
        }

        @Override
        public long get() {
            Transaction tx = Transaction.current();
            return tx.root() == 0 ? 0 : tx.readLong(tx.root());
        }
    }

    @TempDir
    Path dir;

    @Test
    void shouldFindTheRdmaProviderAndSayWhyItIsUnavailable() {
        assertInstanceOf(RdmaFabricProvider.class, FabricProviders.find("rdma"));
        var a = FabricProviders.find("rdma").availability();
        assertFalse(a.available());
        assertTrue(a.reason().contains("libdisni not found on java.library.path"), a.reason());
    }

    @Test
    void shouldFallBackToTcpAndCommitThroughIt() {
        FabricProviders.Selection s = FabricProviders.select("rdma", false);
        assertTrue(s.fellBack());
        assertEquals("tcp", s.provider().name());
        assertTrue(s.fallbackReason().contains("libdisni not found on java.library.path"), s.fallbackReason());

        BackendConfiguration config = BackendConfiguration.builder(dir.resolve("node.pm")).size(16L << 20).maxFrontends(2)
                .semRingCapacity(64 << 10).redoRingCapacity(256 << 10).slabSize(256 << 10).port(-1).conclude();
        try (BackendNode node = BackendNode.start(config);
             FabricProvider.Responder responder = FabricProviders.serve("rdma", false, node.nic(),
                     new InetSocketAddress("127.0.0.1", 0))) {
            assertEquals("tcp", responder.fabric(), "the node side falls back too");
            try (Fabric fabric = FabricProviders.open("rdma", false, "127.0.0.1", responder.port(), Map.of());
                 AsymNvm nvm = AsymNvm.open(fabric, 0, FrontendOptions.defaults())) {
                assertEquals("tcp", fabric.name());
                Counter counter = nvm.transactional(Counter.class, new CounterImpl());
                counter.add(5);
                counter.add(7);
                assertEquals(12, counter.get());
                assertTrue(nvm.counters().flushes() >= 2, "each SYNC commit waited for a FLUSH over tcp");
            }
            // the next incarnation of the frontend, through AsymNvm.connect by fabric name, sees what committed
            try (AsymNvm nvm = AsymNvm.connect("rdma", "127.0.0.1", responder.port(), 0, FrontendOptions.defaults())) {
                Counter counter = nvm.transactional(Counter.class, new CounterImpl());
                assertEquals(12, counter.get());
                counter.add(30);
                assertEquals(42, counter.get());
            }
        }
    }

    @Test
    void shouldRefuseInStrictModeWithATypedError() {
        FabricUnavailableException e = assertThrows(FabricUnavailableException.class,
                () -> FabricProviders.open("rdma", true, "127.0.0.1", 7000, Map.of()));
        assertEquals("rdma", e.fabric());
        assertEquals(ErrorCode.CONNECTION_LOST, e.errorCode());
        assertTrue(e.getMessage().contains("libdisni not found on java.library.path"), e.getMessage());
    }

    @Test
    void shouldRefuseRdmaClassesDirectlyAndValidateOptionsFirst() {
        assertThrows(FabricUnavailableException.class, () -> new RdmaFabric("127.0.0.1", 7000,
                RdmaOptions.defaults()));
        EmulatedNic nic = new EmulatedNic(new RegionTable(), (session, request) -> request, PersistenceDomain.ADR);
        RdmaNicServer server = new RdmaNicServer(nic, new InetSocketAddress("127.0.0.1", 0));
        FabricUnavailableException e = assertThrows(FabricUnavailableException.class, server::start);
        assertTrue(e.getMessage().contains("libdisni"), e.getMessage());
        server.close();
        assertThrows(FabricUnavailableException.class, () -> FabricProviders.serve("rdma", true, nic,
                new InetSocketAddress("127.0.0.1", 0)));

        IllegalArgumentException unknown = assertThrows(IllegalArgumentException.class,
                () -> FabricProviders.find("rdma").open("127.0.0.1", 7000, Map.of("qp-depth", "4")));
        assertTrue(unknown.getMessage().contains("qp-depth"), unknown.getMessage());
        IllegalArgumentException bad = assertThrows(IllegalArgumentException.class,
                () -> RdmaOptions.parse(Map.of("depth", "0")));
        assertTrue(bad.getMessage().contains("depth") && bad.getMessage().contains("[1, 256]"), bad.getMessage());
        IllegalArgumentException staging = assertThrows(IllegalArgumentException.class,
                () -> RdmaOptions.parse(Map.of("staging-slots", "1024", "slot-bytes", String.valueOf(16 << 20))));
        assertTrue(staging.getMessage().contains(String.valueOf(RdmaOptions.MAX_STAGING)), staging.getMessage());
    }
}
