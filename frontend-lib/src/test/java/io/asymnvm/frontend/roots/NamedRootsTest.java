package io.asymnvm.frontend.roots;

import io.asymnvm.backend.BackendConfiguration;
import io.asymnvm.backend.BackendNode;
import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.frontend.AsymNvm;
import io.asymnvm.frontend.FrontendOptions;
import io.asymnvm.testsupport.ShmTempDirFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Named roots: the PM root directory, the backend's Chronicle Map catalog, and its rebuild. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class NamedRootsTest {

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    private BackendNode node() {
        return BackendNode.start(BackendConfiguration.builder(dir.resolve("backend.pm")).size(256L << 20)
                .conclude());
    }

    @Test
    void shouldCreateOnceAndReopenByName() {
        Map<String, Long> addresses = new HashMap<>();
        try (BackendNode node = node()) {
            try (AsymNvm nvm = AsymNvm.open(node.localFabric(), 0, FrontendOptions.defaults())) {
                for (int i = 0; i < 40; i++) { // more than the directory's initial capacity: it grows
                    addresses.put("counter-" + i, nvm.namedRoot("counter-" + i, CounterFactory.TYPE, 0, 0));
                }
                assertEquals(40, addresses.values().stream().distinct().count(), "distinct structures");
                assertEquals(addresses.get("counter-3"), nvm.namedRoot("counter-3", CounterFactory.TYPE, 0, 0));
                var indexed = nvm.catalogLookup("counter-7");
                assertNotNull(indexed, "the catalog indexes the name");
                assertEquals(0, indexed.owner());
                assertEquals(addresses.get("counter-7"), indexed.entry().address());
            }
        }
        try (BackendNode node = node();
             AsymNvm nvm = AsymNvm.open(node.localFabric(), 0, FrontendOptions.defaults())) {
            for (Map.Entry<String, Long> e : addresses.entrySet()) {
                assertEquals(e.getValue(), nvm.namedRoot(e.getKey(), CounterFactory.TYPE, 0, 0), e.getKey());
            }
        }
    }

    @Test
    void shouldRefuseWrongTypeCodecOrOwner() {
        try (BackendNode node = node()) {
            try (AsymNvm nvm = AsymNvm.open(node.localFabric(), 0, FrontendOptions.defaults())) {
                nvm.namedRoot("accounts", CounterFactory.TYPE, 1, 2);
                IllegalArgumentException codec = assertThrows(IllegalArgumentException.class,
                        () -> nvm.namedRoot("accounts", CounterFactory.TYPE, 1, 3));
                assertTrue(codec.getMessage().contains("value codec 2") && codec.getMessage().contains("value codec 3"),
                        codec.getMessage());
                IllegalStateException type = assertThrows(IllegalStateException.class,
                        () -> nvm.namedRoot("other", 12345, 0, 0));
                assertTrue(type.getMessage().contains("12345"), type.getMessage());
                assertThrows(IllegalArgumentException.class, () -> nvm.namedRoot("x".repeat(41), 99, 0, 0));
            }
            try (AsymNvm other = AsymNvm.open(node.localFabric(), 1, FrontendOptions.defaults())) {
                AsymNvmException owner = assertThrows(AsymNvmException.class,
                        () -> other.namedRoot("accounts", CounterFactory.TYPE, 1, 2));
                assertEquals(ErrorCode.NAME_TAKEN, owner.errorCode(), owner.getMessage());
                assertTrue(owner.getMessage().contains("belongs to frontend 0"), owner.getMessage());
                assertNotEquals(0, other.namedRoot("mine", CounterFactory.TYPE, 0, 0));
            }
        }
    }

    @Test
    void shouldRebuildTheCatalogFromPmWhenItsFileIsLostOrGarbage() throws Exception {
        long address;
        try (BackendNode node = node();
             AsymNvm nvm = AsymNvm.open(node.localFabric(), 0, FrontendOptions.defaults())) {
            address = nvm.namedRoot("events", CounterFactory.TYPE, 4, 5);
        }
        Path catalog = dir.resolve("backend.pm.catalog");
        assertTrue(Files.exists(catalog), "the catalog index is persisted next to the PM image");
        Files.delete(catalog);
        try (BackendNode node = node()) {
            var e = node.catalog().lookup("events");
            assertNotNull(e, "rebuilt from the root directory in PM");
            assertEquals(address, e.entry().address());
            assertEquals(5, e.entry().valueCodec());
        }
        Files.write(catalog, new byte[] {1, 2, 3, 4, 5, 6, 7, 8, 9});
        try (BackendNode node = node()) {
            assertEquals(address, node.catalog().lookup("events").entry().address(), "garbage file rebuilt");
        }
    }

    /**
     * The one way a name can still exist twice: frontend 1 creates it (acknowledged, its redo not yet applied),
     * the backend restarts (the in-memory claim is gone, the directories do not hold the name yet), frontend 2
     * creates it, then frontend 1's recovery re-executes its creation. Nothing is dropped: the rebuilt catalog
     * reports the duplicate by name with both owners, and each frontend still reaches its own structure.
     */
    @Test
    void shouldReportADuplicateNameAndKeepBothReachable() {
        // redo held back (10 s), so frontend 1's creation is durable in its semantic log only
        FrontendOptions unapplied = FrontendOptions.builder().redoBatch(1_000, 1 << 20, 10_000_000).conclude();
        long first;
        try (BackendNode node = node()) {
            AsymNvm one = AsymNvm.open(node.localFabric(), 1, unapplied);
            first = one.namedRoot("dup", CounterFactory.TYPE, 0, 0);
            one.crash();
        }
        long second;
        try (BackendNode node = node()) {
            try (AsymNvm two = AsymNvm.open(node.localFabric(), 2, FrontendOptions.defaults())) {
                second = two.namedRoot("dup", CounterFactory.TYPE, 0, 0);
                two.sync();
            }
            try (AsymNvm one = AsymNvm.open(node.localFabric(), 1, FrontendOptions.defaults())) {
                assertEquals(1, one.recover().transactions(), "frontend 1 re-executes its creation");
                one.sync();
                assertEquals(first, one.namedRoot("dup", CounterFactory.TYPE, 0, 0), "frontend 1 reaches its own");
            }
        }
        try (BackendNode node = node()) {
            assertEquals(Map.of("dup", List.of(1, 2)), node.catalog().duplicates(),
                    "the rebuilt catalog names the duplicate and both owners");
            try (AsymNvm one = AsymNvm.open(node.localFabric(), 1, FrontendOptions.defaults())) {
                assertEquals(first, one.namedRoot("dup", CounterFactory.TYPE, 0, 0));
            }
            try (AsymNvm two = AsymNvm.open(node.localFabric(), 2, FrontendOptions.defaults())) {
                assertEquals(second, two.namedRoot("dup", CounterFactory.TYPE, 0, 0));
            }
        }
    }
}
