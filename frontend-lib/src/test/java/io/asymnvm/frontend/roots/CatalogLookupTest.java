package io.asymnvm.frontend.roots;

import io.asymnvm.backend.BackendConfiguration;
import io.asymnvm.backend.BackendNode;
import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.fabric.Completion;
import io.asymnvm.core.fabric.Fabric;
import io.asymnvm.core.layout.ControlMessageLayout;
import io.asymnvm.frontend.AsymNvm;
import io.asymnvm.frontend.ControlCallFabric;
import io.asymnvm.frontend.FrontendOptions;
import io.asymnvm.testsupport.ShmTempDirFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Catalog lookups are answered by the index: a name that is absent walks no root directory once the index is
 * complete, and a directory is walked again only after it changed, which also finds names whose bind never reached
 * the index (counted in directory walks, never timed).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class CatalogLookupTest {
    private static final int ABSENT_LOOKUPS = 200;

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    private BackendNode node() {
        return BackendNode.start(BackendConfiguration.builder(dir.resolve("backend.pm")).size(128L << 20)
                .maxFrontends(4).conclude());
    }

    @Test
    void shouldLookUpAbsentNamesWithoutWalkingDirectories() {
        try (BackendNode node = node()) {
            try (AsymNvm zero = AsymNvm.open(node.localFabric(), 0, FrontendOptions.defaults());
                 AsymNvm one = AsymNvm.open(node.localFabric(), 1, FrontendOptions.defaults())) {
                for (int i = 0; i < 5; i++) {
                    zero.namedRoot("zero-" + i, CounterFactory.TYPE, 0, 0);
                    one.namedRoot("one-" + i, CounterFactory.TYPE, 0, 0);
                }
                zero.sync();
                one.sync();
                assertNull(node.catalog().lookup("warm-up")); // catches up with both directories once
                long walks = node.catalog().directoryWalks();
                for (int i = 0; i < ABSENT_LOOKUPS; i++) {
                    assertNull(node.catalog().lookup("absent-" + i));
                    assertNull(one.catalogLookup("absent-" + i));
                }
                assertEquals(walks, node.catalog().directoryWalks(), "absent names walked directories");
                System.out.println("catalog: " + 2 * ABSENT_LOOKUPS + " lookups of absent names walked "
                        + (node.catalog().directoryWalks() - walks) + " directories (a scan per miss would walk "
                        + 4 * ABSENT_LOOKUPS + ")");

                zero.namedRoot("zero-late", CounterFactory.TYPE, 0, 0);
                zero.sync();
                walks = node.catalog().directoryWalks();
                assertNull(node.catalog().lookup("absent-after-a-change"));
                assertEquals(walks + 1, node.catalog().directoryWalks(), "only the changed directory is walked");
                assertNotNull(node.catalog().lookup("zero-late"));
                assertEquals(walks + 1, node.catalog().directoryWalks());
            }
        }
        try (BackendNode node = node()) { // a clean reopen: the index is verified against every directory once
            assertNotNull(node.catalog().lookup("one-3"));
            long walks = node.catalog().directoryWalks();
            assertEquals(2, walks, "the open walks each directory once");
            for (int i = 0; i < ABSENT_LOOKUPS; i++) {
                assertNull(node.catalog().lookup("absent-" + i));
            }
            assertEquals(walks, node.catalog().directoryWalks());
        }
    }

    @Test
    void shouldFindANameWhoseBindNeverReachedTheIndex() {
        try (BackendNode node = node()) {
            long address;
            AsymNvm zero = AsymNvm.open(losingBinds(node.localFabric()), 0, FrontendOptions.defaults());
            address = zero.namedRoot("orphan", CounterFactory.TYPE, 0, 0); // claimed, created; the bind is lost
            zero.sync();
            zero.crash();
            try (AsymNvm one = AsymNvm.open(node.localFabric(), 1, FrontendOptions.defaults())) {
                AsymNvmException taken = assertThrows(AsymNvmException.class,
                        () -> one.namedRoot("orphan", CounterFactory.TYPE, 0, 0));
                assertEquals(ErrorCode.NAME_TAKEN, taken.errorCode(), taken.getMessage());
                assertTrue(taken.getMessage().contains("belongs to frontend 0"), taken.getMessage());
            }
            var e = node.catalog().lookup("orphan");
            assertEquals(0, e.owner());
            assertEquals(address, e.entry().address(), "indexed from frontend 0's directory in PM");
            try (AsymNvm again = AsymNvm.open(node.localFabric(), 0, FrontendOptions.defaults())) {
                assertEquals(address, again.namedRoot("orphan", CounterFactory.TYPE, 0, 0));
            }
        }
    }

    /** Drops every catalog bind of a created root (address set), as if the frontend died before sending it. */
    private static Fabric losingBinds(Fabric delegate) {
        return new ControlCallFabric(delegate, (kind, request, next) -> {
            long address = ByteBuffer.wrap(request).order(ByteOrder.LITTLE_ENDIAN).getLong(request.length - 8);
            boolean created = address != 0;
            if (kind == ControlMessageLayout.KIND_CATALOG_BIND && created) {
                return Completion.failed(next.counters(), new AsymNvmException(ErrorCode.CATALOG_UNAVAILABLE,
                        "bind lost"));
            }
            return next.call(request);
        });
    }
}
