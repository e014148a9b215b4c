package io.asymnvm.examples.support;

import io.asymnvm.frontend.FrontendOptions;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.TreeMap;

/** What a child JVM of this one needs to run the project's code: the class path and the JVM flags. */
public final class ChildJvm {
    private ChildJvm() {
    }

    /**
     * This JVM's class path. Under Maven Surefire {@code java.class.path} is a manifest-only booter jar, and the
     * test class path is in {@code surefire.test.class.path}.
     */
    public static String classPath() {
        String surefire = System.getProperty("surefire.test.class.path");
        return surefire != null && !surefire.isBlank() ? surefire : System.getProperty("java.class.path");
    }

    /** Module and Chronicle flags this JVM was started with (the backend's catalog needs the same ones). */
    public static List<String> inheritedJvmFlags() {
        List<String> flags = new ArrayList<>();
        List<String> in = ManagementFactory.getRuntimeMXBean().getInputArguments();
        for (int i = 0; i < in.size(); i++) {
            String a = in.get(i);
            if (a.startsWith("--add-opens") || a.startsWith("--add-exports") || a.startsWith("--add-modules")
                    || a.startsWith("--enable-native-access")) {
                flags.add(a);
                if (!a.contains("=") && i + 1 < in.size()) {
                    flags.add(in.get(++i));
                }
            } else if (a.startsWith("-Dchronicle.")) {
                flags.add(a);
            }
        }
        flags.addAll(projectProperties());
        return flags;
    }

    /** Prefix of the project's own system properties ({@value}), which every child JVM receives. */
    public static final String PROPERTY_PREFIX = "asymnvm.";

    /**
     * This JVM's {@code -Dasymnvm.*} system properties as flags, sorted by name: the coherence check mode
     * ({@link FrontendOptions#VERIFY_CACHE_PROPERTY}, which the test suite sets), group commit, the tcp client's
     * switches and the engine's kill switches reach a child (a YCSB client, a drill's node) exactly as they were set
     * here, whether on this JVM's command line or by {@link System#setProperty}. A value is passed as one argument
     * (no shell quoting needed).
     */
    public static List<String> projectProperties() {
        Properties p = System.getProperties();
        TreeMap<String, String> mine = new TreeMap<>();
        for (String name : p.stringPropertyNames()) {
            if (name.startsWith(PROPERTY_PREFIX)) {
                mine.put(name, p.getProperty(name));
            }
        }
        List<String> flags = new ArrayList<>(mine.size());
        mine.forEach((name, value) -> flags.add("-D" + name + "=" + value));
        return flags;
    }
}
