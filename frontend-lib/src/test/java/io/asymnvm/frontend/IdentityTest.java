package io.asymnvm.frontend;

import io.asymnvm.backend.BackendConfiguration;
import io.asymnvm.backend.BackendNode;
import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.testsupport.ShmTempDirFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A frontend never resumes on a different PM image than the one it attached to. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class IdentityTest {

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    private static BackendNode node(Path file, int port) {
        return BackendNode.start(BackendConfiguration.builder(file).size(256L << 20).port(port)
                .credentials(file.resolveSibling("shared.credentials")).conclude()); // both images, one secret
    }

    @Test
    void shouldRefuseToResumeOnAnotherImage() throws Exception {
        BackendNode first = node(dir.resolve("a.pm"), 0);
        int port = first.port();
        AsymNvm nvm = AsymNvm.connect("127.0.0.1", port, 0,
                FrontendOptions.builder().reconnectTimeoutMillis(10_000).credentials(first.credentialsFile()).conclude());
        try {
            Cells cells = nvm.transactional(Cells.class, new Cells.Impl());
            cells.create(4);
            cells.set(1, 11);
            first.close();
            try (BackendNode other = node(dir.resolve("b.pm"), port)) {
                AsymNvmException e = assertThrows(AsymNvmException.class, () -> cells.set(2, 22));
                assertEquals(ErrorCode.IDENTITY_MISMATCH, e.errorCode(), e.getMessage());
                assertTrue(e.getMessage().contains("another image"), e.getMessage());
                assertEquals(0, other.frontendLog(0).checkpoint().appliedTxId(), "nothing written to the other image");
            }
        } finally {
            nvm.crash();
        }
        try (BackendNode again = node(dir.resolve("a.pm"), 0);
             AsymNvm reopened = AsymNvm.open(again.localFabric(), 0, FrontendOptions.defaults())) {
            Cells cells = reopened.transactional(Cells.class, new Cells.Impl());
            reopened.recover();
            assertEquals(11, cells.get(1), "the acknowledged write is on its own image");
        }
    }
}
