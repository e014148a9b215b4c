package io.asymnvm.system;

import io.asymnvm.backend.BackendConfiguration;
import io.asymnvm.backend.BackendNode;
import io.asymnvm.frontend.AsymNvm;
import io.asymnvm.frontend.FrontendOptions;
import io.asymnvm.recovery.crash.SimulatedPmRegion;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Issue 7, item 7: a semantic record that a dead incarnation posted but never flushed, adopted by the next
 * incarnation's recovery, must be durable once that incarnation's FLUSH stamps the watermark past it. Composed
 * failure: frontend crash (record posted, no FLUSH) → recovery → a new acknowledged commit → power failure with
 * every unpersisted store lost. Before the fix the adopted record was never written by the new session, so its
 * FLUSH did not persist it, the durable watermark covered bytes that were lost, and the backend refused to start.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class AdoptedRecordTest {
    private static final int ACCOUNTS = 4;
    private static final long INITIAL = 1_000;

    private record Frontend(AsymNvm nvm, Accounts accounts, AsyncTransfers async, Ledger ledger) {
    }

    @TempDir
    Path dir;

    private final BackendConfiguration config = BackendConfiguration.builder(Path.of("unused.pm"))
            .size(PowerFailureRig.PM_SIZE).maxFrontends(2).semRingCapacity(16 << 10).redoRingCapacity(16 << 10)
            .slabSize(64 << 10).conclude();

    /** The background flush never comes within the test: only a SYNC commit's FLUSH makes anything durable. */
    private final FrontendOptions options = FrontendOptions.builder().asyncFlushMicros(TimeUnit.SECONDS.toMicros(10))
            .redoBatch(1_000, 1 << 20, TimeUnit.SECONDS.toMicros(10)).conclude();

    @Test
    void shouldPersistAdoptedRecordsBeforeTheWatermarkCoversThem() {
        SimulatedPmRegion region = new SimulatedPmRegion("adopted records", PowerFailureRig.PM_SIZE);
        long[] expected = new long[ACCOUNTS];
        java.util.Arrays.fill(expected, INITIAL);
        BackendNode node = BackendNode.start(config, region);
        try {
            Frontend first = open(node);
            first.accounts().create(ACCOUNTS, INITIAL);
            first.nvm().sync();
            first.async().transferLater(0, 1, 7); // posted, not flushed
            first.nvm().crash();
            expected[0] -= 7;
            expected[1] += 7;

            Frontend second = open(node);
            assertEquals(1, second.nvm().recover().transactions(), "the posted ASYNC transfer is re-executed");
            second.accounts().transfer(2, 3, 11); // SYNC: its FLUSH stamps the watermark past the adopted record
            expected[2] -= 11;
            expected[3] += 11;
            assertArrayEquals(expected, second.ledger().balances());
            second.nvm().crash();
        } finally {
            node.close();
        }

        // power fails: every store not persisted is lost
        SimulatedPmRegion after = new SimulatedPmRegion("after the power failure", region.durableImage());
        BackendNode restarted = BackendNode.start(config, after);
        try {
            Frontend third = open(restarted);
            third.nvm().recover();
            assertArrayEquals(expected, third.ledger().balances(),
                    "the acknowledged transfer and the adopted one it was ordered after survive");
            third.nvm().close();
        } finally {
            restarted.close();
        }
    }

    private Frontend open(BackendNode node) {
        AsymNvm nvm = AsymNvm.open(node.localFabric(), 0, options);
        return new Frontend(nvm, nvm.transactional(Accounts.class, new Accounts.Impl()),
                nvm.transactional(AsyncTransfers.class, new AsyncTransfers.Impl()),
                nvm.transactional(Ledger.class, new Ledger.Impl()));
    }
}
