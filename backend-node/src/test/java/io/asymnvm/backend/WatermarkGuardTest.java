package io.asymnvm.backend;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.fabric.FabricConnection;
import io.asymnvm.core.layout.ControlBlockLayout;
import io.asymnvm.core.layout.RegionIds;
import io.asymnvm.core.layout.SemanticRecordLayout;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static io.asymnvm.backend.BackendFixture.attach;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The durable watermark is the backend's to set (issue 7 item 7, issue 10 item 2): a FLUSH stamp moves it only
 * over valid records that end exactly at the stamp, which the backend persists itself; a stamp past them, or
 * inside a record, is refused with {@code BAD_REQUEST} and the watermark stays, so a client cannot leave a ring
 * that is invalid before its watermark and a backend that refuses to start.
 */
class WatermarkGuardTest {
    private static final int ARGS = 40;

    @TempDir
    Path dir;

    @Test
    void shouldMoveTheWatermarkOnlyOverValidRecords() {
        Path pm = dir.resolve("guard.pm");
        long end;
        try (BackendNode node = BackendFixture.start(pm); FabricConnection c = node.localFabric().connect()) {
            attach(c, 0);
            long position = 0;
            for (int i = 1; i <= 3; i++) {
                byte[] r = SemanticRecordLayout.encode(position, i, 0xFEED, BackendFixture.bytes(ARGS, i), ARGS);
                c.write(RegionIds.semantic(0), position, r, 0, r.length).await();
                position += r.length;
            }
            end = position;
            long beyond = end + 4096;
            AsymNvmException past = assertThrows(AsymNvmException.class, () -> c.flush(beyond, true).await());
            assertEquals(ErrorCode.BAD_REQUEST, past.errorCode(), past.getMessage());
            assertTrue(past.getMessage().contains("valid records only up to position " + end), past.getMessage());
            assertEquals(0, ControlBlockLayout.durableSemTail(BackendFixture.controlBlock(c, 0)), "unmoved");

            AsymNvmException inside = assertThrows(AsymNvmException.class, () -> c.flush(end - 8, true).await());
            assertTrue(inside.getMessage().contains("not at a record boundary"), inside.getMessage());

            c.flush(end, true).await();
            assertEquals(end, ControlBlockLayout.durableSemTail(BackendFixture.controlBlock(c, 0)));
            c.flush(8, true).await(); // never backwards
            assertEquals(end, ControlBlockLayout.durableSemTail(BackendFixture.controlBlock(c, 0)));
        }
        try (BackendNode node = BackendFixture.start(pm)) {
            assertEquals(3, node.frontendLog(0).scanSemantic().records(), "the backend starts and finds them");
        }
    }
}
