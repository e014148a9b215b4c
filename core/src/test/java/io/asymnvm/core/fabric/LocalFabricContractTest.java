package io.asymnvm.core.fabric;

import io.asymnvm.core.fabric.local.LocalFabric;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(60)
class LocalFabricContractTest extends FabricContractTest {

    @Override
    protected Fabric createFabric(EmulatedNic nic) {
        return new LocalFabric(nic);
    }

    @Test
    void localOperationsAreCompleteWhenPostReturns() {
        FabricConnection c = attached();
        Completion w = c.write(RW, 0, new byte[8], 0, 8);
        assertTrue(w.isDone());
        Completion bad = c.read(RW, RW_LENGTH, 1);
        assertTrue(bad.isFailed(), "errors are reported on the completion, not thrown by the post");
        assertEquals("local", fabric.name());
    }
}
