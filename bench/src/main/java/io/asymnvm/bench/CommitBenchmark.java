package io.asymnvm.bench;

import io.asymnvm.examples.commit.CommitRig;
import io.asymnvm.examples.commit.FabricKind;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

import java.util.concurrent.TimeUnit;

/**
 * Latency of one single-thread SYNC transaction (writes one long; returns once its semantic record is
 * durable), per fabric, next to its baseline: the fabric's raw persisted-write round trip (64-byte WRITE +
 * awaited FLUSH) on a separate connection to the same backend. A backend node on a scratch PM file (under
 * {@code /dev/shm} when present) and a frontend are started per trial by {@link CommitRig}, the same rig as
 * {@code ./asymnvm bench commit}.
 *
 * <p>Run from the repository root:
 * <pre>
 * mvn -B -ntp -q -pl bench -am package -DskipTests
 * java -cp "bench/target/classes:bench/target/lib/*" org.openjdk.jmh.Main CommitBenchmark
 * java -cp "bench/target/classes:bench/target/lib/*" org.openjdk.jmh.Main CommitBenchmark -p fabric=tcp
 * </pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {ForkFlags.OPEN_LANG, ForkFlags.OPEN_REFLECT, ForkFlags.EXPORT_NIO,
        ForkFlags.EXPORT_REF, ForkFlags.EXPORT_JAVAC, ForkFlags.NO_ANALYTICS, ForkFlags.LOG_WARN})
@Threads(1)
public class CommitBenchmark {

    @Param({"local", "tcp"})
    public String fabric;

    private CommitRig rig;
    private long value;

    @Setup(Level.Trial)
    public void setUp() {
        rig = CommitRig.start(FabricKind.parse(fabric));
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        rig.close();
    }

    /** One SYNC transaction setting one persistent long. */
    @Benchmark
    public void commit() {
        rig.commit(++value);
    }

    /** The baseline: WRITE 64 bytes + FLUSH, awaited, on the raw fabric connection. */
    @Benchmark
    public void rawWriteFlush() {
        rig.rawRoundTrip();
    }
}
