package io.asymnvm.examples.ycsb;

import io.asymnvm.frontend.AsymNvm;
import io.asymnvm.frontend.tx.EngineStats;
import io.asymnvm.testsupport.ShmTempDirFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import site.ycsb.DBException;
import site.ycsb.measurements.Measurements;
import site.ycsb.workloads.CoreWorkload;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The binding's warm-up ({@link YcsbWarmup}) on an embedded store: it reads records of the workload's key space and,
 * with the workload's update share, commits real updates that leave every record's bytes as they were (so YCSB's
 * value checks still hold); it refuses a table that was not loaded and bad operation counts, naming them.
 */
@Timeout(60)
class YcsbWarmupTest {
    private static final int RECORDS = 300;

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    /** YCSB's key names, exactly as the workload builds them. */
    private static final class KeyNames extends CoreWorkload {
        String name(long keynum) {
            return buildKeyName(keynum);
        }
    }

    private static Properties workload(char w) throws IOException {
        Properties p = new Properties();
        try (InputStream in = YcsbRun.class.getResourceAsStream("workload" + w)) {
            p.load(in);
        }
        p.setProperty("recordcount", String.valueOf(RECORDS));
        p.setProperty("operationcount", "1000");
        p.setProperty("dataintegrity", "true");
        return p;
    }

    private static Map<String, byte[]> load(YcsbStore store, Properties p) throws Exception {
        Measurements.setProperties(p);
        KeyNames names = new KeyNames();
        names.init(p);
        Map<String, byte[]> loaded = new HashMap<>();
        for (int i = 0; i < RECORDS; i++) {
            Map<String, byte[]> fields = new LinkedHashMap<>();
            for (int f = 0; f < 10; f++) {
                fields.put("field" + f, ("value " + i + "/" + f + " ").repeat(8).getBytes());
            }
            String key = names.name(i);
            byte[] record = YcsbRecord.encode(fields);
            assertTrue(store.insert(key, record), key);
            loaded.put(key, record);
        }
        return loaded;
    }

    @Test
    void shouldReadAndCommitUpdatesThatLeaveEveryRecordAsItWas() throws Exception {
        Properties p = workload('a');
        try (AsymNvm nvm = AsymNvm.embedded(dir)) {
            YcsbStore store = nvm.transactional(YcsbStore.class, new YcsbStore.Impl(nvm, false, "usertable"));
            Map<String, byte[]> loaded = load(store, p);
            EngineStats before = nvm.stats();

            YcsbWarmup.Result done = YcsbWarmup.run(p, store, 400);

            EngineStats after = nvm.stats();
            assertEquals(400, done.operations());
            assertEquals(400, done.reads());
            // workload A: half updates (seeded draws: 400 of them land well inside 150..250)
            assertTrue(done.updates() > 150 && done.updates() < 250, done.toString());
            assertEquals(done.updates(), after.commits() - before.commits(), "each update is one committed tx");
            for (Map.Entry<String, byte[]> r : loaded.entrySet()) {
                assertArrayEquals(r.getValue(), store.read(r.getKey()), r.getKey());
            }
            assertEquals(done, YcsbWarmup.parse(List.of("some other line", done.line())));
        }
    }

    @Test
    void shouldOnlyReadInAReadOnlyWorkload() throws Exception {
        Properties p = workload('c');
        try (AsymNvm nvm = AsymNvm.embedded(dir)) {
            YcsbStore store = nvm.transactional(YcsbStore.class, new YcsbStore.Impl(nvm, true, "usertable"));
            load(store, p);
            long commits = nvm.stats().commits();
            YcsbWarmup.Result done = YcsbWarmup.run(p, store, 200);
            assertEquals(200, done.reads());
            assertEquals(0, done.updates());
            assertEquals(commits, nvm.stats().commits());
        }
    }

    @Test
    void shouldRefuseATableThatWasNotLoaded() throws Exception {
        Properties p = workload('a');
        try (AsymNvm nvm = AsymNvm.embedded(dir)) {
            YcsbStore store = nvm.transactional(YcsbStore.class, new YcsbStore.Impl(nvm, false, "usertable"));
            DBException e = assertThrows(DBException.class, () -> YcsbWarmup.run(p, store, 10));
            assertTrue(e.getMessage().contains("is missing (is the table loaded with " + RECORDS + " records?)"),
                    e.getMessage());
        }
    }

    @Test
    void shouldRefuseBadOperationCountsNamingThem() {
        Properties p = new Properties();
        p.setProperty(YcsbWarmup.OPERATIONS_PROPERTY, "-3");
        DBException negative = assertThrows(DBException.class, () -> YcsbWarmup.operations(p));
        assertEquals("asymnvm.warmupOperations -3 is outside [0, 100000000]", negative.getMessage());
        p.setProperty(YcsbWarmup.OPERATIONS_PROPERTY, "many");
        DBException word = assertThrows(DBException.class, () -> YcsbWarmup.operations(p));
        assertEquals("asymnvm.warmupOperations is not a number: 'many'", word.getMessage());
        assertNull(YcsbWarmup.parse(List.of("no warm-up here")));
    }
}
