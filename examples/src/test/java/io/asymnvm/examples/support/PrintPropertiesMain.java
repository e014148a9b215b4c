package io.asymnvm.examples.support;

/** A child JVM's main for {@link ChildJvmTest}: prints {@code name=value} for each system property named. */
public final class PrintPropertiesMain {
    private PrintPropertiesMain() {
    }

    public static void main(String[] names) {
        for (String name : names) {
            System.out.println(name + "=" + System.getProperty(name));
        }
    }
}
