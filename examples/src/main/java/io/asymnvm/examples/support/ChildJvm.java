package io.asymnvm.examples.support;

import io.asymnvm.frontend.FrontendOptions;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;

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
        // the coherence check mode reaches the children too (the test suite sets it as a system property)
        String verify = System.getProperty(FrontendOptions.VERIFY_CACHE_PROPERTY);
        if (verify != null) {
            flags.add("-D" + FrontendOptions.VERIFY_CACHE_PROPERTY + "=" + verify);
        }
        return flags;
    }
}
