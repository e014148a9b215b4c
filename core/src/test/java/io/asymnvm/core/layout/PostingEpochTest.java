package io.asymnvm.core.layout;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(10)
class PostingEpochTest {
    @Test
    void shouldPackAndUnpackAttachEpochAndGeneration() {
        long e = PostingEpoch.pack(7, 3);
        assertEquals(7, PostingEpoch.attachEpoch(e));
        assertEquals(3, PostingEpoch.generation(e));
        assertEquals(7, PostingEpoch.pack(7, 0), "generation 0 is the attach epoch itself");
        long max = PostingEpoch.pack(PostingEpoch.ATTACH_EPOCH_MASK, PostingEpoch.MAX_GENERATION);
        assertTrue(max > 0, "a posting epoch stays positive on the wire");
        assertEquals(PostingEpoch.MAX_GENERATION, PostingEpoch.generation(max));
        assertEquals("attach epoch 7, posting generation 3", PostingEpoch.describe(e));
        assertEquals("attach epoch 7", PostingEpoch.describe(7));
    }

    @Test
    void shouldRejectValuesOutOfRangeNamingThem() {
        IllegalArgumentException a = assertThrows(IllegalArgumentException.class,
                () -> PostingEpoch.pack(PostingEpoch.ATTACH_EPOCH_MASK + 1, 0));
        assertTrue(a.getMessage().contains("attach epoch " + (PostingEpoch.ATTACH_EPOCH_MASK + 1)), a.getMessage());
        IllegalArgumentException g = assertThrows(IllegalArgumentException.class, () -> PostingEpoch.pack(1, -1));
        assertTrue(g.getMessage().contains("posting generation -1"), g.getMessage());
    }

    @Test
    void aDeclarationCoversTheSameAttachEpochAtAnEqualOrLowerGeneration() {
        assertTrue(PostingEpoch.covers(PostingEpoch.pack(3, 1), PostingEpoch.pack(3, 1)));
        assertTrue(PostingEpoch.covers(PostingEpoch.pack(3, 2), PostingEpoch.pack(3, 1)), "re-declared first");
        assertFalse(PostingEpoch.covers(PostingEpoch.pack(3, 0), PostingEpoch.pack(3, 1)), "dropped");
        assertFalse(PostingEpoch.covers(PostingEpoch.pack(2, 5), PostingEpoch.pack(3, 0)), "another attach epoch");
    }

    @Test
    void onlyARaisedGenerationVoidsADeclaration() {
        assertTrue(PostingEpoch.voids(PostingEpoch.pack(3, 1), PostingEpoch.pack(3, 0)));
        assertTrue(PostingEpoch.voids(PostingEpoch.pack(4, 1), PostingEpoch.pack(3, 0)), "missed the re-declaration");
        assertTrue(PostingEpoch.voids(PostingEpoch.pack(3, 1), 0), "never declared");
        assertFalse(PostingEpoch.voids(PostingEpoch.pack(3, 1), PostingEpoch.pack(3, 1)));
        assertFalse(PostingEpoch.voids(PostingEpoch.pack(4, 0), PostingEpoch.pack(3, 0)), "a reconnect alone");
    }
}
