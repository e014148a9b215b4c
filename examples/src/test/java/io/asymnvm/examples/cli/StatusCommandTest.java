package io.asymnvm.examples.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.asymnvm.backend.BackendConfiguration;
import io.asymnvm.backend.BackendNode;
import io.asymnvm.backend.log.FrontendLog;
import io.asymnvm.core.layout.SemanticRecordLayout;
import io.asymnvm.examples.bank.Bank;
import io.asymnvm.examples.bank.BankImpl;
import io.asymnvm.frontend.AsymNvm;
import io.asymnvm.frontend.FrontendOptions;
import io.asymnvm.recovery.log.RingScanner;
import io.asymnvm.testsupport.ShmTempDirFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code asymnvm status}: a running backend's frontends, asked for without attaching; a quarantined frontend is
 * shown with its ring and offset and makes the command exit 1.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class StatusCommandTest {
    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    private final StringWriter out = new StringWriter();

    private int status(int port, String... more) {
        List<String> args = new ArrayList<>(List.of("status", "--port", Integer.toString(port)));
        args.addAll(List.of(more));
        return CliFixture.execute(out, new StringWriter(), args.toArray(String[]::new));
    }

    private BackendNode start(Path pm) {
        return BackendNode.start(BackendConfiguration.builder(pm).size(128L << 20).maxFrontends(4).port(0).conclude());
    }

    @Test
    void shouldShowAttachedFrontendsAndAQuarantinedOneWithItsOffset() throws IOException {
        Path pm = dir.resolve("status.pm");
        long damagedAt;
        try (BackendNode node = start(pm)) {
            AsymNvm victim = AsymNvm.connect("127.0.0.1", node.port(), 1,
                    FrontendOptions.builder().redoBatch(1 << 20, 16 << 20, 10_000_000)
                            .credentials(node.credentialsFile()).conclude());
            Bank bank = victim.transactional(Bank.class, new BankImpl());
            bank.open(4, 100);
            victim.sync();
            bank.transfer(0, 1, 5);
            bank.transfer(1, 2, 5);
            bank.transfer(2, 3, 5);
            try (AsymNvm nvm = AsymNvm.connect("127.0.0.1", node.port(), 0,
                    FrontendOptions.defaults().withCredentials(node.credentialsFile()))) {
                nvm.transactional(Bank.class, new BankImpl()).open(2, 7);
                assertEquals(0, status(node.port()), out.toString());
                assertTrue(out.toString().contains("frontend 0: attached"), out.toString());
                assertTrue(out.toString().contains("frontend 1: attached"), out.toString());
            }
            FrontendLog log = node.frontendLog(1);
            List<Long> positions = new ArrayList<>();
            RingScanner.scan(log.semanticReader(), log.checkpoint().semHead(), 0, e -> positions.add(e.position()));
            damagedAt = log.semanticReader().offsetOf(positions.get(1));
            victim.crash();
        }
        try (RandomAccessFile f = new RandomAccessFile(pm.toFile(), "rw")) {
            f.seek(damagedAt + SemanticRecordLayout.HEADER_LENGTH);
            int b = f.read();
            f.seek(damagedAt + SemanticRecordLayout.HEADER_LENGTH);
            f.write(b ^ 0x11);
        }
        try (BackendNode node = start(pm)) {
            out.getBuffer().setLength(0);
            assertEquals(1, status(node.port()), out.toString());
            assertTrue(out.toString().contains("frontend 1: not attached") && out.toString().contains("QUARANTINED")
                    && out.toString().contains("offset " + damagedAt), out.toString());
            assertTrue(out.toString().contains("frontend 0: not attached, attach epoch 1"), out.toString());

            out.getBuffer().setLength(0);
            assertEquals(1, status(node.port(), "--json"), out.toString());
            JsonNode json = new ObjectMapper().readTree(out.toString());
            JsonNode f1 = json.path("frontends").get(1);
            assertEquals(1, f1.path("id").asInt());
            assertTrue(f1.path("quarantined").asBoolean());
            assertEquals(damagedAt, f1.path("quarantine").path("offset").asLong());
            assertFalse(json.path("frontends").get(0).path("quarantined").asBoolean());
        }
    }
}
