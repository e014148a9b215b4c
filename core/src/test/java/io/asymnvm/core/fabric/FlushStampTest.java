package io.asymnvm.core.fabric;

import io.asymnvm.core.region.ByteArrayRegion;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The durable watermark a FLUSH stamps never moves backwards, also when two FLUSHes of one session overlap (the
 * backend runs FLUSHes on its workers when a connection shares its event loop): the one that read the older value
 * must not store its smaller stamp over the larger one the other stored meanwhile.
 */
@Timeout(10)
class FlushStampTest {
    private static final int REGION = 7;
    private static final long STAMP_WORD = 64;

    /** A region that runs {@code between} once, right after the stamp word is first read (the race's window). */
    private static final class RacingRegion extends ByteArrayRegion {
        Runnable between;

        RacingRegion() {
            super("stamp", 4096);
        }

        @Override
        public long getLongVolatile(long offset) {
            long v = super.getLongVolatile(offset);
            Runnable r = between;
            if (offset == STAMP_WORD && r != null) {
                between = null;
                r.run();
            }
            return v;
        }
    }

    @Test
    void aFlushThatReadTheWatermarkBeforeALargerStampDoesNotMoveItBack() {
        RacingRegion region = new RacingRegion();
        RegionTable regions = new RegionTable();
        regions.register(REGION, region, 0, region.size(), null);
        EmulatedNic nic = new EmulatedNic(regions, null, PersistenceDomain.ADR);
        NicSession session = new NicSession();
        session.stampAt(REGION, STAMP_WORD, StampGuard.NONE);
        region.putLongVolatile(STAMP_WORD, 5);

        // FLUSH stamp 10 reads 5; before it stores, FLUSH stamp 12 of the same session runs to the end
        region.between = () -> nic.flush(session, 12, true);
        nic.flush(session, 10, true);

        assertEquals(12, region.getLongVolatile(STAMP_WORD), "the watermark went back to the smaller stamp");
    }

    @Test
    void aLargerStampStillMovesTheWatermarkAndASmallerOneLeavesIt() {
        ByteArrayRegion region = new ByteArrayRegion("stamp", 4096);
        RegionTable regions = new RegionTable();
        regions.register(REGION, region, 0, region.size(), null);
        EmulatedNic nic = new EmulatedNic(regions, null, PersistenceDomain.ADR);
        NicSession session = new NicSession();
        session.stampAt(REGION, STAMP_WORD, StampGuard.NONE);

        nic.flush(session, 8, true);
        assertEquals(8, region.getLongVolatile(STAMP_WORD));
        nic.flush(session, 3, true);
        assertEquals(8, region.getLongVolatile(STAMP_WORD), "never backwards");
        nic.flush(session, 9, false);
        assertEquals(8, region.getLongVolatile(STAMP_WORD), "an unstamped FLUSH leaves the watermark");
    }
}
