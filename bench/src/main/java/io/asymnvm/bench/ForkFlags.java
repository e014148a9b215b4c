package io.asymnvm.bench;

/**
 * The JVM options every benchmark fork gets (JMH's {@code @Fork(jvmArgsAppend = ...)} needs compile-time
 * constants). The backend in the fork opens its catalog with Chronicle Map, which needs these flags on JDK 17+;
 * without them the fork logs an error and runs with the catalog switched off, which is not how users run it.
 * Keep in sync with {@code asymnvm.jvmFlags} in the parent {@code pom.xml} and the {@code asymnvm} script.
 */
final class ForkFlags {
    static final String OPEN_LANG = "--add-opens=java.base/java.lang=ALL-UNNAMED";
    static final String OPEN_REFLECT = "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED";
    static final String EXPORT_NIO = "--add-exports=java.base/sun.nio.ch=ALL-UNNAMED";
    static final String EXPORT_REF = "--add-exports=java.base/jdk.internal.ref=ALL-UNNAMED";
    static final String EXPORT_JAVAC = "--add-exports=jdk.compiler/com.sun.tools.javac.file=ALL-UNNAMED";
    static final String NO_ANALYTICS = "-Dchronicle.analytics.disable=true";
    static final String LOG_WARN = "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn";
    static final String HEAP = "-Xmx1g";

    private ForkFlags() {
    }
}
