package io.asymnvm.examples.support;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A child JVM started with {@link ChildJvm#inheritedJvmFlags()} sees this JVM's {@code asymnvm.*} system properties
 * with their exact values (a YCSB client or a drill node runs with the switches its parent was given), and no
 * other system property of this JVM.
 */
class ChildJvmTest {
    private static final String PROBE = "asymnvm.childJvmTest.probe";
    private static final String SECOND = "asymnvm.childJvmTest.second";
    private static final String FOREIGN = "childJvmTest.foreign";

    @AfterEach
    void clear() {
        System.clearProperty(PROBE);
        System.clearProperty(SECOND);
        System.clearProperty(FOREIGN);
    }

    @Test
    @Timeout(60)
    void shouldPassTheProjectsSystemPropertiesToAChildJvm() throws Exception {
        System.setProperty(PROBE, "a value with spaces, = and \"quotes\"");
        System.setProperty(SECOND, "");
        System.setProperty(FOREIGN, "not passed");
        List<String> flags = ChildJvm.inheritedJvmFlags();
        assertTrue(flags.contains("-D" + SECOND + "="), flags::toString);
        assertFalse(flags.stream().anyMatch(f -> f.contains(FOREIGN)), flags::toString);

        List<String> out = runChild(flags, PROBE, SECOND, FOREIGN);
        assertEquals(List.of(PROBE + "=a value with spaces, = and \"quotes\"", SECOND + "=", FOREIGN + "=null"),
                out);
    }

    @Test
    @Timeout(60)
    void shouldPassNothingOfAPropertyClearedSinceTheLastChild() throws Exception {
        System.setProperty(PROBE, "1");
        assertTrue(ChildJvm.projectProperties().contains("-D" + PROBE + "=1"));
        System.clearProperty(PROBE);
        assertEquals(List.of(PROBE + "=null"), runChild(ChildJvm.inheritedJvmFlags(), PROBE));
    }

    private static List<String> runChild(List<String> flags, String... names)
            throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("-Xmx64m");
        cmd.addAll(flags);
        cmd.add("-cp");
        cmd.add(ChildJvm.classPath());
        cmd.add(PrintPropertiesMain.class.getName());
        cmd.addAll(List.of(names));
        Process child = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        byte[] output = child.getInputStream().readAllBytes();
        assertTrue(child.waitFor(30, TimeUnit.SECONDS), "the child JVM did not exit");
        String text = new String(output, StandardCharsets.UTF_8);
        assertEquals(0, child.exitValue(), text);
        return text.lines().toList();
    }
}
