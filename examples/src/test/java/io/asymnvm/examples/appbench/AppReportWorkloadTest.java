package io.asymnvm.examples.appbench;

import io.asymnvm.examples.report.ReportResult;
import io.asymnvm.examples.report.ReportRun;
import io.asymnvm.examples.report.ReportWorkload;
import io.asymnvm.examples.smallbank.SmallBankBench;
import io.asymnvm.examples.smallbank.SmallBankMix;
import io.asymnvm.examples.tatp.TatpBench;
import io.asymnvm.examples.tatp.TatpMix;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** TATP and SmallBank as rows of the comparison matrix: quick runs return their name, run and counts. */
@Timeout(120)
class AppReportWorkloadTest {

    private static ReportResult check(ReportWorkload w, String name, List<String> types, String fabric)
            throws Exception {
        assertEquals(name, w.name());
        ReportResult r = w.run(new ReportRun(fabric, 2, 0.2, true));
        assertEquals(name, r.name());
        assertEquals(fabric, r.fabric());
        assertEquals(2, r.threads());
        assertTrue(r.opsPerSecond() > 0 && r.p99Micros() >= r.p50Micros(), r.toString());
        @SuppressWarnings("unchecked")
        Map<String, Object> perType = (Map<String, Object>) r.extra().get("per_type");
        assertEquals(types, List.copyOf(perType.keySet()));
        long sum = 0;
        for (Object counts : perType.values()) {
            sum += (Long) ((Map<?, ?>) counts).get("count");
        }
        assertEquals(r.extra().get("transactions"), sum);
        return r;
    }

    @Test
    void shouldRunTatpAsAReportWorkload() throws Exception {
        check(new TatpBench(), "tatp", TatpMix.TYPES, "local");
    }

    @Test
    void shouldRunSmallBankAsAReportWorkloadAndCheckItsMoney() throws Exception {
        ReportResult r = check(new SmallBankBench(), "smallbank", SmallBankMix.TYPES, "local");
        assertEquals(Boolean.TRUE, r.extra().get("money_conserved"));
        assertEquals(r.extra().get("money_expected"), r.extra().get("money_actual"));
    }

    @Test
    void shouldRefuseAnUnknownFabric() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new TatpBench().run(new ReportRun("carrier-pigeon", 1, 1, true)));
        assertTrue(e.getMessage().contains("carrier-pigeon"), e.getMessage());
    }
}
