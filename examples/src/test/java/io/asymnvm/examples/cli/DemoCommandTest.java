package io.asymnvm.examples.cli;

import io.asymnvm.testsupport.ShmTempDirFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.StringWriter;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The demo's structure parts: a line per part, verified after the reopen, also when an image is continued. */
@Timeout(60)
class DemoCommandTest {
    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    private int execute(String... args) {
        out.getBuffer().setLength(0);
        return CliFixture.execute(out, err, args);
    }

    @Test
    void shouldVerifyEveryPartAfterTheReopen() {
        int code = execute("demo", "--transfers", "300", "--accounts", "8", "--kv", "600", "--events", "450",
                "--seed", "7");
        String text = out.toString();
        assertEquals(0, code, text + "\n" + err);
        assertTrue(text.contains("key-values: 600 operations on hash map 'demo-kv'"), text);
        assertTrue(text.contains("events: 450 recorded in B+tree 'demo-events'"), text);
        assertTrue(text.contains("  bank: PASSED") && text.contains("  key-values: PASSED")
                && text.contains("  events: PASSED (count 450,"), text);
        assertTrue(text.contains("verification: PASSED (bank, key-values, events)"), text);
    }

    @Test
    void shouldContinueTheStructuresOfAKeptImage() {
        String image = dir.resolve("image").toString();
        assertEquals(0, execute("demo", "--dir", image, "--transfers", "100", "--accounts", "4", "--kv", "300",
                "--events", "250"), out.toString());
        assertEquals(0, execute("demo", "--dir", image, "--transfers", "100", "--accounts", "4", "--kv", "500",
                "--events", "120"), out.toString());
        assertTrue(out.toString().contains("events: PASSED (count 370,"), out.toString());
        assertEquals(0, execute("demo", "--dir", image, "--transfers", "10", "--accounts", "4", "--kv", "0",
                "--events", "0"), out.toString());
        assertTrue(out.toString().contains("verification: PASSED (bank)"), out.toString());
        assertEquals(2, execute("demo", "--kv", "-1"));
    }
}
