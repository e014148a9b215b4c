package io.asymnvm.examples.drill;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The drill's verdicts: what a recovered bank may look like, and how a wrong one is classified. */
@Timeout(10)
class BankOracleTest {
    private final BankOracle oracle = new BankOracle(4, 100);

    @Test
    void shouldPredictAbortsLikeTheBank() {
        assertTrue(oracle.commits(new Transfer(1, 0, 1, 100)));
        assertFalse(oracle.commits(new Transfer(2, 0, 1, 101)));
    }

    @Test
    void shouldAcceptTheOracleOrTheOracleWithTheTransferInDoubt() {
        oracle.apply(new Transfer(1, 0, 1, 30));
        assertEquals(BankOracle.Outcome.MATCH, oracle.check(new long[] {70, 130, 100, 100}, null).outcome());
        Transfer inDoubt = new Transfer(2, 2, 3, 5);
        assertEquals(BankOracle.Outcome.MATCH, oracle.check(new long[] {70, 130, 100, 100}, inDoubt).outcome());
        assertEquals(BankOracle.Outcome.IN_DOUBT_COMMITTED,
                oracle.check(new long[] {70, 130, 95, 105}, inDoubt).outcome());
        assertArrayEquals(new long[] {70, 130, 95, 105}, oracle.balances(), "the committed one joins the oracle");
    }

    @Test
    void shouldNotAcceptAnInDoubtTransferThatMustHaveAborted() {
        Transfer impossible = new Transfer(1, 0, 1, 150);
        BankOracle.Verdict v = oracle.check(new long[] {-50, 250, 100, 100}, impossible);
        assertEquals(BankOracle.Outcome.LOST, v.outcome(), v.detail());
    }

    @Test
    void shouldCallAMissingAcknowledgedTransferLostAndSayHowManyAreMissing() {
        oracle.apply(new Transfer(1, 0, 1, 10));
        oracle.apply(new Transfer(2, 1, 2, 20));
        oracle.apply(new Transfer(3, 2, 3, 30));
        BankOracle.Verdict v = oracle.check(new long[] {90, 110, 100, 100}, null);
        assertEquals(BankOracle.Outcome.LOST, v.outcome());
        assertTrue(v.detail().contains("before the last 2 of them"), v.detail());
        assertArrayEquals(new long[] {90, 110, 100, 100}, oracle.balances(), "reset: one fault is reported once");
    }

    @Test
    void shouldCallAChangedTotalPartial() {
        BankOracle.Verdict v = oracle.check(new long[] {90, 100, 100, 100}, null);
        assertEquals(BankOracle.Outcome.PARTIAL, v.outcome());
        assertTrue(v.detail().contains("total is 390, must be 400"), v.detail());
        assertEquals(BankOracle.Outcome.WRONG_SIZE, oracle.check(new long[] {400}, null).outcome());
    }
}
