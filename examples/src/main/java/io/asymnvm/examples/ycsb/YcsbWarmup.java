package io.asymnvm.examples.ycsb;

import site.ycsb.DBException;
import site.ycsb.WorkloadException;
import site.ycsb.measurements.Measurements;
import site.ycsb.workloads.CoreWorkload;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The warm-up of a YCSB run phase, done by the binding in the client JVM before YCSB's first measured operation
 * (issue 8 goal 6: a fresh client JVM starts with a cold page cache and an unoptimised JIT, and a short run then
 * measures its start, not the data path). It runs {@value #OPERATIONS_PROPERTY} operations through the same
 * transactional store the measured ones use: keys drawn by the workload's own key chooser (YCSB's
 * {@link CoreWorkload}, so the same distribution and key names), each one a read, and with the workload's update
 * share (update plus read-modify-write proportion) also an update that writes one field of the record back with the
 * bytes it holds. Nothing changes, so YCSB's value checks ({@code dataintegrity}) still hold, yet every update is a
 * real durable transaction (commit round trip, redo, replay). YCSB's measurements never see these operations.
 *
 * <p>It prints one line, {@value #REPORT_PREFIX} {@code operations=N reads=R updates=U millis=T}, to standard
 * error, which {@link YcsbRun} reads back from the client's log.
 */
final class YcsbWarmup {
    /** Binding property: operations of the warm-up (0 or absent: none). */
    static final String OPERATIONS_PROPERTY = "asymnvm.warmupOperations";
    /** Most operations of a warm-up. */
    static final long MAX_OPERATIONS = 100_000_000L;
    static final String REPORT_PREFIX = "asymnvm ycsb warm-up:";
    private static final Pattern REPORT = Pattern.compile(Pattern.quote(REPORT_PREFIX)
            + " operations=(\\d+) reads=(\\d+) updates=(\\d+) millis=(\\d+)");
    /** Key draws per operation before the warm-up gives up on finding a loaded key (a chooser beyond the table). */
    private static final int MAX_DRAWS = 1_000;
    private static final long SEED = 20261125L;

    /** What a warm-up did. */
    record Result(long operations, long reads, long updates, long millis) {
        String line() {
            return REPORT_PREFIX + " operations=" + operations + " reads=" + reads + " updates=" + updates
                    + " millis=" + millis;
        }
    }

    /** YCSB's key chooser and key names for a workload's properties. */
    private static final class Keys extends CoreWorkload {
        long next() {
            return keychooser.nextValue().longValue();
        }

        String name(long keynum) {
            return buildKeyName(keynum);
        }

        long records() {
            return recordcount;
        }
    }

    private YcsbWarmup() {
    }

    /** The operations {@code p} asks for; a bad value is refused naming it and the limits. */
    static long operations(Properties p) throws DBException {
        String v = p.getProperty(OPERATIONS_PROPERTY, "0").trim();
        long n;
        try {
            n = Long.parseLong(v);
        } catch (NumberFormatException e) {
            throw new DBException(OPERATIONS_PROPERTY + " is not a number: '" + v + "'");
        }
        if (n < 0 || n > MAX_OPERATIONS) {
            throw new DBException(OPERATIONS_PROPERTY + " " + n + " is outside [0, " + MAX_OPERATIONS + "]");
        }
        return n;
    }

    /** Runs {@code operations} warm-up operations against {@code store}, as described above. */
    static Result run(Properties p, YcsbStore store, long operations) throws DBException {
        Measurements.setProperties(p); // YCSB's client did so already; another driver may not have
        Keys keys = new Keys();
        try {
            keys.init(p);
        } catch (WorkloadException | RuntimeException e) {
            throw new DBException("warm-up: the workload's properties: " + e, e);
        }
        long records = keys.records();
        double updateShare = share(p, CoreWorkload.UPDATE_PROPORTION_PROPERTY,
                CoreWorkload.UPDATE_PROPORTION_PROPERTY_DEFAULT)
                + share(p, CoreWorkload.READMODIFYWRITE_PROPORTION_PROPERTY,
                CoreWorkload.READMODIFYWRITE_PROPORTION_PROPERTY_DEFAULT);
        Random random = new Random(SEED);
        long reads = 0;
        long updates = 0;
        long start = System.nanoTime();
        for (long i = 0; i < operations && records > 0; i++) {
            String key = keys.name(loadedKey(keys, records));
            byte[] record = store.read(key);
            if (record == null) {
                throw new DBException("warm-up: record " + key + " is missing (is the table loaded with "
                        + records + " records?)");
            }
            reads++;
            if (random.nextDouble() < updateShare) {
                Map<String, byte[]> fields = YcsbRecord.decode(record);
                List<String> names = new ArrayList<>(fields.keySet());
                String field = names.get(random.nextInt(names.size()));
                if (!store.update(key, YcsbRecord.encode(Map.of(field, fields.get(field))))) {
                    throw new DBException("warm-up: record " + key + " vanished before its update");
                }
                updates++;
            }
        }
        return new Result(reads, reads, updates, (System.nanoTime() - start) / 1_000_000);
    }

    private static long loadedKey(Keys keys, long records) throws DBException {
        for (int draw = 0; draw < MAX_DRAWS; draw++) {
            long k = keys.next();
            if (k >= 0 && k < records) {
                return k;
            }
        }
        throw new DBException("warm-up: the workload's key chooser gave no key below recordcount " + records
                + " in " + MAX_DRAWS + " draws");
    }

    private static double share(Properties p, String name, String fallback) {
        return Double.parseDouble(p.getProperty(name, fallback));
    }

    /** The warm-up a client's log reports, or null if it ran none. */
    static Result parse(List<String> log) {
        for (String line : log) {
            Matcher m = REPORT.matcher(line);
            if (m.find()) {
                return new Result(Long.parseLong(m.group(1)), Long.parseLong(m.group(2)),
                        Long.parseLong(m.group(3)), Long.parseLong(m.group(4)));
            }
        }
        return null;
    }
}
