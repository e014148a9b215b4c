package io.asymnvm.frontend;

import io.asymnvm.core.fabric.WaitPolicy;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The commit-latency options of {@link FrontendOptions}: wait policy and FLUSH combining. */
class WaitOptionsTest {
    @Test
    void shouldDefaultToAdaptiveWaitingAndPipelinedFlushes() {
        FrontendOptions o = FrontendOptions.defaults();
        assertEquals(WaitPolicy.Kind.ADAPTIVE, o.waitPolicy());
        assertFalse(o.combineFlushes());
    }

    @Test
    void shouldKeepTheWaitPolicyAndCombiningWhenCredentialsAreAdded() {
        FrontendOptions o = FrontendOptions.builder().waitPolicy(WaitPolicy.Kind.SPIN).combineFlushes(true)
                .conclude().withCredentials(java.nio.file.Path.of("c"));
        assertEquals(WaitPolicy.Kind.SPIN, o.waitPolicy());
        assertTrue(o.combineFlushes());
    }

    @Test
    void shouldRefuseAMissingWaitPolicyNamingTheChoices() {
        var e = assertThrows(IllegalArgumentException.class,
                () -> FrontendOptions.builder().waitPolicy(null).conclude());
        assertTrue(e.getMessage().contains("SPIN, ADAPTIVE, PARK"), e.getMessage());
    }
}
