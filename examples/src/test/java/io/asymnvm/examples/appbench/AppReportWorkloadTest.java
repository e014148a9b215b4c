package io.asymnvm.examples.appbench;

import io.asymnvm.examples.commit.FabricKind;
import io.asymnvm.examples.report.ReportResult;
import io.asymnvm.examples.report.ReportRun;
import io.asymnvm.examples.report.ReportWorkload;
import io.asymnvm.examples.smallbank.SmallBankBench;
import io.asymnvm.examples.smallbank.SmallBankMix;
import io.asymnvm.examples.tatp.TatpBench;
import io.asymnvm.examples.tatp.TatpMix;
import io.asymnvm.testsupport.ShmTempDirFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** TATP and SmallBank as rows of the comparison matrix: name, counts adding up, checks, scratch space cleaned. */
@Timeout(120)
class AppReportWorkloadTest {
    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    private ReportResult check(ReportWorkload w, String name, List<String> types) throws Exception {
        assertEquals(name, w.name());
        ReportResult r = w.run(new ReportRun(0.3, 0, 2, 200, dir, 5));
        assertTrue(r.operations() > 0 && r.opsPerSecond() > 0, r.toString());
        assertEquals(r.operations(), r.latencyNanos().getTotalCount());
        double sum = 0;
        for (String t : types) {
            sum += r.metrics().get(t.toLowerCase(Locale.ROOT) + "_count");
        }
        assertEquals(r.operations(), (long) sum, r.metrics().toString());
        try (var left = Files.list(dir)) {
            assertEquals(0, left.count(), "the row removed its PM file");
        }
        return r;
    }

    @Test
    void shouldRunTatpAsAReportRow() throws Exception {
        ReportResult r = check(new TatpBench().reportWorkload(FabricKind.LOCAL), "tatp/asymnvm-local", TatpMix.TYPES);
        assertEquals(200.0, r.metrics().get("subscriber_rows"));
    }

    @Test
    void shouldRunSmallBankAsAReportRowAndCheckItsMoney() throws Exception {
        ReportResult r = check(new SmallBankBench().reportWorkload(FabricKind.TCP), "smallbank/asymnvm-tcp",
                SmallBankMix.TYPES);
        assertEquals(1.0, r.metrics().get("money_conserved"));
        assertEquals(r.metrics().get("money_expected"), r.metrics().get("money_actual"));
    }
}
