package io.asymnvm.examples.report;

import io.asymnvm.examples.commit.FabricKind;
import io.asymnvm.examples.kv.StructureKind;
import io.asymnvm.examples.mapbench.MapReportWorkload;
import io.asymnvm.examples.mapbench.Workload;
import io.asymnvm.examples.putbench.PutsReportWorkload;
import io.asymnvm.examples.ycsb.YcsbReportWorkload;
import io.asymnvm.examples.ycsb.YcsbRun;
import io.asymnvm.frontend.ExecutionMode;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * The rows of {@code bench report}, in the order they run. Every row reuses an existing rig:
 * <ul>
 *   <li>{@link #MAP}: {@code bench map}'s driver, workloads a and c, both structures, this project embedded, over
 *       tcp and in naive mode over tcp (and embedded, in the full run), and the volatile TreeMap+lock and
 *       ConcurrentHashMap;</li>
 *   <li>{@link #PUTS}: {@code bench puts}' driver, 1 KiB durable puts: this project embedded and over tcp, the raw
 *       floor, MapDB (WAL, transaction per put), Chronicle Map (fdatasync per put, and no sync);</li>
 *   <li>{@link #YCSB}: YCSB's client against the project's binding, A to F (E on the B+tree only), both
 *       structures embedded (the quick run: A on the hash map only, each YCSB row starts two JVMs), and A over
 *       tcp, design and naive, for the goal "the design at least 22 times the naive baseline over tcp";</li>
 *   <li>{@link #SCALING}: {@code bench map} on the embedded hash map at 1, 2, 4 and 8 threads;</li>
 *   <li>{@link #APPS}: the examples' applications (TATP, SmallBank), one line each in {@link #applications}.</li>
 * </ul>
 */
public final class ReportMatrix {
    public static final String MAP = "map";
    public static final String PUTS = "puts";
    public static final String YCSB = "ycsb";
    public static final String SCALING = "scaling";
    public static final String APPS = "apps";
    /** Thread counts of the scaling section. */
    public static final int[] SCALING_THREADS = {1, 2, 4, 8};
    /** Value size of the puts rows (bench puts' default). */
    public static final int PUT_VALUE_BYTES = 1024;

    /**
     * How long and how big: seconds and warm-up of each row, keys of the map rows, records of the YCSB rows,
     * keys of the puts rows, and whether the run is the quick one (fewer rows).
     */
    public record Sizes(boolean quick, double seconds, double warmup, int mapKeys, int ycsbRecords, int putKeys,
                        double ycsbSeconds, long ycsbWarmupOperations) {
        public Sizes {
            if (!(seconds > 0) || !(ycsbSeconds > 0) || warmup < 0 || mapKeys < 1 || ycsbRecords < 1
                    || putKeys < 1 || ycsbWarmupOperations < 0) {
                throw new IllegalArgumentException("report sizes must be positive: seconds " + seconds + ", warm-up "
                        + warmup + ", map keys " + mapKeys + ", YCSB records " + ycsbRecords + ", put keys " + putKeys
                        + ", YCSB seconds " + ycsbSeconds + ", YCSB warm-up operations " + ycsbWarmupOperations);
            }
        }

        /** {@code ycsbWarmupOperations}: YCSB's default warm-up for the records ({@link YcsbRun}). */
        public Sizes(boolean quick, double seconds, double warmup, int mapKeys, int ycsbRecords, int putKeys,
                     double ycsbSeconds) {
            this(quick, seconds, warmup, mapKeys, ycsbRecords, putKeys, ycsbSeconds,
                    YcsbRun.defaultWarmupOperations(ycsbRecords));
        }

        /**
         * {@code --quick}: about 2 minutes on the 2-core machine. 1,000 YCSB records: the YCSB rows were 62% of a
         * quick run's wall time with 2,000 (each starts two JVMs, and a naive row loads its records at about 100/s).
         */
        public static Sizes forQuick() {
            return new Sizes(true, 1.0, 0.3, 10_000, 1_000, 10_000, 1);
        }

        /** The full run: about 15 minutes on the 2-core machine. */
        public static Sizes forFull() {
            return new Sizes(false, 5.0, 1.0, 100_000, 10_000, 100_000, 5);
        }
    }

    private ReportMatrix() {
    }

    /** The matrix for {@code sizes}, with this project's rows in the given {@code modes} only. */
    public static List<ReportEntry> build(Sizes sizes, Set<ExecutionMode> modes) {
        List<ReportEntry> out = new ArrayList<>();
        boolean design = modes.contains(ExecutionMode.ASYMNVM);
        boolean naive = modes.contains(ExecutionMode.NAIVE);
        for (Workload w : new Workload[] {Workload.A, Workload.C}) {
            for (StructureKind s : StructureKind.values()) {
                if (design) {
                    out.add(map(sizes, MapReportWorkload.persistent(s, FabricKind.LOCAL, ExecutionMode.ASYMNVM, w)));
                    out.add(map(sizes, MapReportWorkload.persistent(s, FabricKind.TCP, ExecutionMode.ASYMNVM, w)));
                }
                if (naive) {
                    if (!sizes.quick()) {
                        out.add(map(sizes, MapReportWorkload.persistent(s, FabricKind.LOCAL, ExecutionMode.NAIVE,
                                w)));
                    }
                    out.add(map(sizes, MapReportWorkload.persistent(s, FabricKind.TCP, ExecutionMode.NAIVE, w)));
                }
                out.add(map(sizes, MapReportWorkload.volatileBaseline(s, w)));
            }
        }
        for (PutsReportWorkload.Store store : PutsReportWorkload.Store.values()) {
            boolean project = store == PutsReportWorkload.Store.ASYMNVM_LOCAL
                    || store == PutsReportWorkload.Store.ASYMNVM_TCP;
            if (!project || design) {
                out.add(new ReportEntry(PUTS, new PutsReportWorkload(store, PUT_VALUE_BYTES), sizes.seconds(),
                        sizes.warmup(), 1, sizes.putKeys()));
            }
        }
        for (StructureKind s : StructureKind.values()) {
            for (char w : "abcdef".toCharArray()) {
                if (w == 'e' && !s.ordered()) {
                    continue;
                }
                // the quick run: A only, and embedded on the hash map only (the tcp rows below carry both structures)
                if (design && (!sizes.quick() || w == 'a' && !s.ordered())) {
                    out.add(ycsb(sizes, new YcsbReportWorkload(w, s, FabricKind.LOCAL, ExecutionMode.ASYMNVM,
                            sizes.ycsbWarmupOperations())));
                }
            }
            if (design) {
                out.add(ycsb(sizes, new YcsbReportWorkload('a', s, FabricKind.TCP, ExecutionMode.ASYMNVM,
                        sizes.ycsbWarmupOperations())));
            }
            if (naive) {
                out.add(ycsb(sizes, new YcsbReportWorkload('a', s, FabricKind.TCP, ExecutionMode.NAIVE,
                        sizes.ycsbWarmupOperations())));
            }
        }
        if (design) {
            for (Workload w : sizes.quick() ? new Workload[] {Workload.C} : new Workload[] {Workload.C, Workload.A}) {
                for (int t : SCALING_THREADS) {
                    out.add(new ReportEntry(SCALING, MapReportWorkload.persistent(StructureKind.HASH, FabricKind.LOCAL,
                            ExecutionMode.ASYMNVM, w), sizes.seconds(), sizes.warmup(), t, sizes.mapKeys()));
                }
            }
        }
        applications(out, sizes);
        return out;
    }

    /**
     * The applications written as examples (TATP, SmallBank): each joins the report with one line here, e.g.
     * {@code out.add(app(sizes, new TatpReportWorkload()));}.
     */
    private static void applications(List<ReportEntry> out, Sizes sizes) {
        for (FabricKind fabric : FabricKind.values()) {
            out.add(app(sizes, new io.asymnvm.examples.tatp.TatpBench().reportWorkload(fabric)));
            out.add(app(sizes, new io.asymnvm.examples.smallbank.SmallBankBench().reportWorkload(fabric)));
        }
    }

    /** An application row: the run's seconds and warm-up, one thread, the map rows' data set size. */
    static ReportEntry app(Sizes sizes, ReportWorkload workload) {
        return new ReportEntry(APPS, workload, sizes.seconds(), sizes.warmup(), 1, sizes.mapKeys());
    }

    private static ReportEntry map(Sizes sizes, ReportWorkload workload) {
        return new ReportEntry(MAP, workload, sizes.seconds(), sizes.warmup(), 1, sizes.mapKeys());
    }

    private static ReportEntry ycsb(Sizes sizes, ReportWorkload workload) {
        return new ReportEntry(YCSB, workload, sizes.ycsbSeconds(), 0, 1, sizes.ycsbRecords());
    }
}
