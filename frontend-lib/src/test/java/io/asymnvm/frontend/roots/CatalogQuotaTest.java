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

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A frontend that holds its quota of catalog names (--catalog-quota) is refused the next one with
 * {@code QUOTA_EXCEEDED} before its creating transaction runs: nothing is written, its structures stay reachable,
 * it keeps working, and other frontends keep their own quota.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class CatalogQuotaTest {
    private static final int QUOTA = 3;

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    private BackendNode node(int port) {
        return BackendNode.start(BackendConfiguration.builder(dir.resolve("backend.pm")).size(128L << 20)
                .maxFrontends(4).port(port).catalogQuota(QUOTA).conclude());
    }

    private static AsymNvm connect(BackendNode node, int frontendId) {
        return AsymNvm.connect("127.0.0.1", node.port(), frontendId,
                FrontendOptions.defaults().withCredentials(node.credentialsFile()));
    }

    @Test
    void shouldRefuseANameBeyondTheQuotaBeforeCreatingAnything() {
        Map<String, Long> roots = new LinkedHashMap<>();
        int port;
        try (BackendNode node = node(0)) {
            port = node.port();
            try (AsymNvm zero = connect(node, 0); AsymNvm one = connect(node, 1)) {
                for (String n : new String[] {"a", "b", "c"}) {
                    roots.put(n, zero.namedRoot(n, CounterFactory.TYPE, 0, 0));
                }
                zero.sync();
                AsymNvmException e = assertThrows(AsymNvmException.class,
                        () -> zero.namedRoot("d", CounterFactory.TYPE, 0, 0));
                assertEquals(ErrorCode.QUOTA_EXCEEDED, e.errorCode(), e.getMessage());
                assertTrue(e.getMessage().contains("frontend 0 holds 3 catalog names, quota 3")
                        && e.getMessage().contains("'d'"), e.getMessage());
                assertNull(zero.catalogLookup("d"), "nothing bound");
                roots.forEach((n, address) -> assertEquals(address, zero.namedRoot(n, CounterFactory.TYPE, 0, 0), n));
                zero.sync(); // the frontend keeps working

                long d = one.namedRoot("d", CounterFactory.TYPE, 0, 0); // its own quota
                assertEquals(1, zero.catalogLookup("d").owner());
                roots.put("d", d);
                one.sync();
            }
            assertEquals(Set.of("a", "b", "c", "d"), node.catalog().scanDirectories().keySet(),
                    "the refused creation wrote nothing to frontend 0's root directory");
        }
        try (BackendNode node = node(port); AsymNvm zero = connect(node, 0)) {
            for (String n : new String[] {"a", "b", "c"}) {
                assertEquals(roots.get(n), zero.namedRoot(n, CounterFactory.TYPE, 0, 0), n);
            }
            assertEquals(ErrorCode.QUOTA_EXCEEDED, assertThrows(AsymNvmException.class,
                    () -> zero.namedRoot("e", CounterFactory.TYPE, 0, 0)).errorCode(), "counted again at restart");
        }
    }
}
