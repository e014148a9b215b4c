package io.asymnvm.system.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.asymnvm.examples.drill.Drill;
import io.asymnvm.examples.drill.DrillReport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The ZooKeeper-loss drill (issue 9 item 7, {@code drill --kill zookeeper --mirrors 2}) on real processes, short:
 * ZooKeeper, backend, two SYNC mirrors and the bank worker are child JVMs. One iteration: ZooKeeper is SIGKILLed, the
 * backend keeps serving its epoch (the worker acknowledges transfers meanwhile), then the backend is SIGKILLed too:
 * nothing is promoted while ZooKeeper is down, exactly one of the two mirrors is promoted after it is back, the other
 * follows the new backend (it must be IN_SYNC under the new epoch: re-attached, image copied, redo streamed), and
 * the bank oracle holds. The lease is 2 s so that a busy build machine's pauses do not expire sessions (a failover
 * nobody caused fails the drill). The backend-stays path (ZooKeeper back, same epoch) runs in even iterations of
 * {@code drill --kill zookeeper} (CI: 2 iterations) and in {@code FailoverCoordinatorTest}.
 */
class ZooKeeperLossDrillTest {
    @Test
    @Timeout(150)
    void shouldKeepServingWithoutZooKeeperAndPromoteOneOfTwoMirrorsOnlyOnceItIsBack() throws IOException {
        DrillReport report = Drill.run(new Drill.Settings(Drill.Target.ZOOKEEPER, 1, 41, 16, 1000, 100, 90, "256m",
                false, false, 2000, 2), () -> { });
        JsonNode v = new ObjectMapper().readTree(report.toJson());
        String json = report.toString();
        System.out.println("ZooKeeper-loss drill: " + json);
        assertEquals(1, v.path("iterations").asInt(), json);
        assertEquals(0, v.path("violations").asInt(), json);
        assertEquals(0, v.path("lost").asInt(), json);
        assertEquals(0, v.path("partial").asInt(), json);
        assertEquals(0, v.path("promotions_without_quorum").asInt(), json);
        assertTrue(v.path("commits_while_zk_down").asLong() > 0, json);
        assertTrue(v.path("failover_ms_p50").asDouble() > 0, json);
        assertEquals(1, v.path("promotions").asInt(), json);
        assertTrue(v.path("acknowledged").asLong() > v.path("commits_while_zk_down").asLong(), json);
        // the first start and the final verify-only worker (on the promoted mirror)
        assertEquals(2, v.path("verifications").asInt(), json);
    }
}
