package io.asymnvm.core.layout;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The messages a mirror joining while frontends run needs (issue 9): MIRROR_POSTING and REPLICATE FRONTENDS. */
@Timeout(60)
class ReplicationLayoutTest {

    @Test
    void shouldRoundTripAPostingWithItsDeclarationAndSemanticStart() {
        byte[] m = ReplicationLayout.posting(3, 7, 41, 128);
        assertEquals(ReplicationLayout.POSTING_LENGTH, m.length);
        assertEquals(ControlMessageLayout.KIND_MIRROR_POSTING, ReplicationLayout.wrap(m).getInt(0));
        assertArrayEquals(new long[] {3, 7, 41, 128}, ReplicationLayout.decodePosting(m));
        assertArrayEquals(new long[] {3, 7, 41, ReplicationLayout.NO_SEM_START},
                ReplicationLayout.decodePosting(ReplicationLayout.posting(3, 7, 41)));
        assertArrayEquals(new long[] {0, 1, ReplicationLayout.NO_DECLARATION, 0},
                ReplicationLayout.decodePosting(ReplicationLayout.posting(0, 1, ReplicationLayout.NO_DECLARATION, 0)));
    }

    @Test
    void shouldRefuseAPostingWithAnImpossibleEpochStartOrLength() {
        for (byte[] bad : new byte[][] {ReplicationLayout.posting(0, 0, 5), ReplicationLayout.posting(0, 1, -2),
                ReplicationLayout.posting(0, 1, 5, 65), new byte[ReplicationLayout.POSTING_LENGTH - 8]}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> ReplicationLayout.decodePosting(bad));
            assertTrue(e.getMessage().startsWith("MIRROR_POSTING"), e.getMessage());
        }
    }

    @Test
    void shouldRoundTripTheAttachedFrontendsAndRefuseAnotherCount() {
        long[] epochs = {0, 9, 2};
        byte[] m = ReplicationLayout.frontends(epochs);
        assertEquals(ReplicationLayout.OP_FRONTENDS, ReplicationLayout.replicateOp(m));
        assertArrayEquals(epochs, ReplicationLayout.decodeFrontends(m, 3));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> ReplicationLayout.decodeFrontends(m, 4));
        assertTrue(e.getMessage().contains("4 frontends"), e.getMessage());
        assertThrows(IllegalArgumentException.class,
                () -> ReplicationLayout.decodeFrontends(ReplicationLayout.frontends(new long[] {0, -1, 0}), 3));
    }
}
