package io.asymnvm.rdma;

import com.ibm.disni.verbs.RdmaProvider;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * Decides once per JVM whether the {@code rdma} fabric can run here: DiSNI's native library ({@code libdisni}) must
 * load and an RDMA device must exist. {@link #probe()} caches its result and never throws.
 *
 * <p>DiSNI 2.0 loads libdisni in the static initialiser of its {@code NativeDispatcher}: without the library the
 * first DiSNI call throws {@link UnsatisfiedLinkError} and every later one {@link NoClassDefFoundError} ("Could not
 * initialize class"), whose message no longer names the library. The probe catches both (and anything else DiSNI
 * throws while opening its provider) and keeps the first reason it saw, so a later probe in the same JVM still says
 * "libdisni not found on java.library.path" rather than a bare class-initialisation error.
 *
 * <p>Devices are listed from {@code /sys/class/infiniband} (every verbs device, InfiniBand, RoCE or iWARP, appears
 * there), so a host with libdisni but no device is told so plainly.
 */
public final class RdmaProbe {
    /** Where the kernel lists verbs devices. */
    public static final Path DEVICE_DIRECTORY = Path.of("/sys/class/infiniband");

    private static final Object LOCK = new Object();
    private static volatile Result cached;
    private static String firstLibraryFailure;

    private RdmaProbe() {
    }

    /** The outcome: {@code reason} names every missing piece (empty when available); {@code devices} found. */
    public record Result(boolean available, String reason, List<String> devices) {
    }

    /** The cached result of the first probe in this JVM. */
    public static Result probe() {
        Result r = cached;
        if (r == null) {
            synchronized (LOCK) {
                r = cached;
                if (r == null) {
                    r = probeNow(DEVICE_DIRECTORY);
                    cached = r;
                }
            }
        }
        return r;
    }

    /** Whether {@link #probe()} found libdisni and a device (for {@code @EnabledIf}). */
    public static boolean isAvailable() {
        return probe().available();
    }

    /** Probes again without the cache (tests; the library state of the JVM is what it is). Never throws. */
    static Result probeNow(Path deviceDirectory) {
        List<String> problems = new ArrayList<>();
        String library = libraryProblem();
        if (library != null) {
            problems.add(library);
        }
        List<String> devices = devices(deviceDirectory);
        if (devices.isEmpty()) {
            problems.add("no RDMA device: " + deviceDirectory + " is absent or empty");
        }
        return new Result(problems.isEmpty(), String.join("; and ", problems), List.copyOf(devices));
    }

    private static String libraryProblem() {
        synchronized (LOCK) {
            try {
                RdmaProvider.provider();
                return null;
            } catch (UnsatisfiedLinkError e) {
                String reason = "libdisni not found on java.library.path (" + System.getProperty("java.library.path")
                        + "): " + e.getMessage() + " (build libdisni from DiSNI's src/main/c on the RDMA host)";
                firstLibraryFailure = reason;
                return reason;
            } catch (NoClassDefFoundError | ExceptionInInitializerError e) {
                String first = firstLibraryFailure;
                return first != null ? first
                        : "DiSNI's native binding failed to initialise earlier in this JVM, most likely libdisni not "
                        + "found on java.library.path (" + System.getProperty("java.library.path") + "): " + e;
            } catch (IOException | RuntimeException | LinkageError e) {
                String reason = "DiSNI could not open its native provider: " + e;
                firstLibraryFailure = reason;
                return reason;
            }
        }
    }

    private static List<String> devices(Path dir) {
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        try (Stream<Path> s = Files.list(dir)) {
            return s.map(p -> p.getFileName().toString()).sorted().toList();
        } catch (IOException | RuntimeException e) {
            return List.of();
        }
    }
}
