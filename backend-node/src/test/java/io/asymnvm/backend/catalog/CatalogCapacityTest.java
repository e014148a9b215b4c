package io.asymnvm.backend.catalog;

import io.asymnvm.backend.BackendConfiguration;
import io.asymnvm.backend.BackendNode;
import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.layout.RootDirectoryLayout;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The catalog holds {@link CatalogIndex#CAPACITY} names of the longest length (its Chronicle Map is sized for
 * them) and refuses the next one with {@code QUOTA_EXCEEDED} before writing anything; the index then survives a
 * clean restart whole.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class CatalogCapacityTest {
    @TempDir
    Path dir;

    private BackendNode node() {
        return BackendNode.start(BackendConfiguration.builder(dir.resolve("backend.pm")).size(64L << 20)
                .maxFrontends(2).catalogQuota(CatalogIndex.CAPACITY).conclude());
    }

    private static String name(int i) {
        String n = "n" + i + "-";
        return n + "x".repeat(RootDirectoryLayout.MAX_NAME_BYTES - n.length()); // the longest names
    }

    @Test
    void shouldHoldItsCapacityOfLongestNamesAndRefuseTheNextTyped() {
        try (BackendNode node = node()) {
            CatalogIndex catalog = node.catalog();
            for (int i = 0; i < CatalogIndex.CAPACITY; i++) {
                catalog.bind(i % 2, new RootDirectoryLayout.Entry(name(i), 7, 0, 0, 0));
            }
            AsymNvmException full = assertThrows(AsymNvmException.class,
                    () -> catalog.bind(1, new RootDirectoryLayout.Entry("one-more", 7, 0, 0, 0)));
            assertEquals(ErrorCode.QUOTA_EXCEEDED, full.errorCode(), full.getMessage());
            assertTrue(full.getMessage().contains("frontend 1") && full.getMessage().contains(
                    CatalogIndex.CAPACITY + " names, its capacity " + CatalogIndex.CAPACITY), full.getMessage());
            assertEquals(CatalogIndex.CAPACITY, catalog.size());
            catalog.bind(0, new RootDirectoryLayout.Entry(name(0), 7, 0, 0, 0)); // a claim again: no new name
            for (int i = 0; i < CatalogIndex.CAPACITY; i += 97) {
                assertNotNull(catalog.lookup(name(i)), name(i));
            }
        }
    }

    @Test
    void shouldRefuseANewNameBeyondTheQuotaOfItsFrontendOnly() {
        try (BackendNode node = BackendNode.start(BackendConfiguration.builder(dir.resolve("quota.pm"))
                .size(64L << 20).maxFrontends(2).catalogQuota(2).conclude())) {
            CatalogIndex catalog = node.catalog();
            catalog.bind(0, new RootDirectoryLayout.Entry("a", 7, 0, 0, 0));
            catalog.bind(0, new RootDirectoryLayout.Entry("b", 7, 0, 0, 0));
            AsymNvmException e = assertThrows(AsymNvmException.class,
                    () -> catalog.bind(0, new RootDirectoryLayout.Entry("c", 7, 0, 0, 0)));
            assertEquals(ErrorCode.QUOTA_EXCEEDED, e.errorCode(), e.getMessage());
            assertTrue(e.getMessage().contains("frontend 0 holds 2 catalog names, quota 2")
                    && e.getMessage().contains("'c'"), e.getMessage());
            catalog.bind(0, new RootDirectoryLayout.Entry("a", 7, 0, 0, 0)); // its own names: still fine
            catalog.bind(1, new RootDirectoryLayout.Entry("c", 7, 0, 0, 0)); // another frontend's quota
            assertEquals(3, catalog.size());
            assertEquals(1, catalog.lookup("c").owner());
        }
    }
}
