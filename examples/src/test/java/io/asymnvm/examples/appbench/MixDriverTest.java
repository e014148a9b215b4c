package io.asymnvm.examples.appbench;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The mix's draw gives each type exactly its share of 0..99; the driver counts every transaction once. */
@Timeout(30)
class MixDriverTest {

    private static TransactionMix mix(int[] percentages, AtomicLong calls) {
        return new TransactionMix() {
            @Override
            public List<String> types() {
                return List.of("A", "B", "C");
            }

            @Override
            public int[] percentages() {
                return percentages;
            }

            @Override
            public Outcome run(int type, SplittableRandom random) {
                calls.incrementAndGet();
                return type == 2 ? Outcome.USER_ABORT : type == 1 ? Outcome.NOT_FOUND : Outcome.OK;
            }
        };
    }

    @Test
    void shouldGiveEachTypeItsPercentageOfTheDraws() {
        int[] cumulative = TransactionMix.cumulative(mix(new int[] {35, 10, 55}, new AtomicLong()));
        int[] hits = new int[3];
        for (int draw = 0; draw < 100; draw++) {
            hits[TransactionMix.pick(cumulative, draw)]++;
        }
        assertArrayEquals(new int[] {35, 10, 55}, hits);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> TransactionMix.cumulative(mix(new int[] {35, 10, 50}, new AtomicLong())));
        assertTrue(e.getMessage().contains("sum to 95"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new MixDriver(mix(new int[] {100, 0, 0},
                new AtomicLong()), 0));
    }

    @Test
    void shouldCountEveryTransactionByTypeAndOutcome() {
        AtomicLong calls = new AtomicLong();
        MixPhase phase = new MixDriver(mix(new int[] {50, 25, 25}, calls), 3).run(0.2, 1);
        assertEquals(calls.get(), phase.transactions());
        assertEquals(phase.count(0), phase.count(0, Outcome.OK));
        assertEquals(phase.count(1), phase.count(1, Outcome.NOT_FOUND));
        assertEquals(phase.count(2), phase.total(Outcome.USER_ABORT));
        assertEquals(phase.transactions(), phase.latency().getTotalCount());
        assertTrue(phase.count(0) > 0 && phase.count(1) > 0 && phase.count(2) > 0, "every type ran");
        assertTrue(phase.elapsedNanos() > 0);
    }
}
