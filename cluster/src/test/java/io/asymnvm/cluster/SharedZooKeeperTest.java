package io.asymnvm.cluster;

import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;

/** Base of the test classes that share one embedded ZooKeeper; each test uses its own cluster name. */
abstract class SharedZooKeeperTest {
    @TempDir
    static Path zkDir;
    static ZkFixture fx;

    @BeforeAll
    static void startZooKeeper() {
        fx = new ZkFixture(zkDir);
    }

    @AfterAll
    static void stopZooKeeper() {
        fx.close();
    }
}
