package io.asymnvm.examples.ycsb;

import io.asymnvm.frontend.AsymNvm;
import io.asymnvm.frontend.ExecutionMode;
import io.asymnvm.frontend.FrontendOptions;
import site.ycsb.ByteArrayByteIterator;
import site.ycsb.ByteIterator;
import site.ycsb.DB;
import site.ycsb.DBException;
import site.ycsb.Status;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.Vector;

/**
 * The YCSB binding: {@code site.ycsb.Client -db io.asymnvm.examples.ycsb.AsymNvmYcsbDb}. YCSB's table is one
 * named {@code PersistentHashMap<String, byte[]>} or {@code PersistentBTree<String, byte[]>} (a record's fields
 * in one value, {@link YcsbRecord}); every operation is one persistent transaction with SYNC durability, so a
 * call that returns OK is durable. All client threads of a JVM share one frontend (YCSB creates one DB object per
 * thread); the last {@link #cleanup} closes it.
 *
 * <p>Properties: {@code asymnvm.fabric} {@code local} (a backend embedded in this JVM on {@code asymnvm.dir}, PM
 * file size {@code asymnvm.size}, default 1 GiB) or {@code tcp} (a running backend at {@code asymnvm.host} and
 * {@code asymnvm.port}, as frontend {@code asymnvm.frontendId}, with the SYNC mirrors {@code asymnvm.mirrors}, see
 * {@link #connectTcp}); {@code asymnvm.structure} {@code hash} (default)
 * or {@code btree} (needed for scans, workload E); {@code asymnvm.name} (default {@code usertable});
 * {@code asymnvm.mode} {@code asymnvm} (default) or {@code naive} (the baseline mode, {@link ExecutionMode});
 * {@code asymnvm.warmupOperations} (default 0) operations of an unmeasured warm-up before the first measured one
 * ({@link YcsbWarmup}; a run phase over a loaded table).
 */
public class AsymNvmYcsbDb extends DB {
    /** The frontend all threads of this JVM share, with its store proxy. */
    private static final class Shared {
        final AsymNvm nvm;
        final YcsbStore store;
        int users;

        Shared(AsymNvm nvm, YcsbStore store) {
            this.nvm = nvm;
            this.store = store;
        }
    }

    private static Shared shared;

    private YcsbStore store;
    private boolean btree;

    @Override
    public void init() throws DBException {
        Properties p = getProperties();
        btree = structure(p);
        synchronized (AsymNvmYcsbDb.class) {
            if (shared == null) {
                long warmup = YcsbWarmup.operations(p);
                Shared opened = open(p, btree);
                if (warmup > 0) {
                    warmUp(p, opened, warmup);
                }
                shared = opened;
            }
            shared.users++;
            store = shared.store;
        }
    }

    /**
     * The warm-up ({@link YcsbWarmup}): the first thread's init runs it, the others wait for it in {@link #init},
     * so YCSB's first measured operation finds a warm cache and JIT. A failure closes the frontend.
     */
    private static void warmUp(Properties p, Shared opened, long operations) throws DBException {
        try {
            YcsbWarmup.Result done = YcsbWarmup.run(p, opened.store, operations);
            System.err.println(done.line());
            System.err.flush();
        } catch (DBException | RuntimeException e) {
            opened.nvm.close();
            throw e instanceof DBException d ? d : new DBException("warm-up failed: " + e, e);
        }
    }

    private static boolean structure(Properties p) throws DBException {
        String s = p.getProperty("asymnvm.structure", "hash");
        return switch (s) {
            case "hash" -> false;
            case "btree" -> true;
            default -> throw new DBException("asymnvm.structure must be hash or btree, not '" + s + "'");
        };
    }

    private static Shared open(Properties p, boolean btree) throws DBException {
        String fabric = p.getProperty("asymnvm.fabric", "local");
        ExecutionMode mode;
        try {
            mode = ExecutionMode.parse(p.getProperty("asymnvm.mode", "asymnvm"));
        } catch (IllegalArgumentException e) {
            throw new DBException("asymnvm.mode: " + e.getMessage(), e);
        }
        AsymNvm nvm;
        try {
            switch (fabric) {
                case "local" -> {
                    String dir = p.getProperty("asymnvm.dir");
                    if (dir == null) {
                        throw new DBException("asymnvm.fabric=local needs asymnvm.dir (the PM directory)");
                    }
                    long size = Long.parseLong(p.getProperty("asymnvm.size", String.valueOf(1L << 30)));
                    nvm = AsymNvm.embedded(Path.of(dir), FrontendOptions.builder().embeddedSizeBytes(size)
                            .mode(mode).conclude());
                }
                case "tcp" -> nvm = connectTcp(p, mode);
                default -> throw new DBException("asymnvm.fabric must be local or tcp, not '" + fabric + "'");
            }
        } catch (NumberFormatException e) {
            throw new DBException("bad number in the asymnvm.* properties: " + e.getMessage(), e);
        }
        try {
            String name = p.getProperty("asymnvm.name", "usertable");
            return new Shared(nvm, nvm.transactional(YcsbStore.class, new YcsbStore.Impl(nvm, btree, name)));
        } catch (RuntimeException e) {
            nvm.close();
            throw new DBException("cannot open the YCSB table: " + e.getMessage(), e);
        }
    }

    /**
     * Over tcp, with the SYNC mirrors of {@code asymnvm.mirrors} ("host:port,..."; none by default): if the backend
     * stays unreachable for {@code asymnvm.reconnectTimeoutMillis} (default 30000) the frontend fails over to a
     * mirror promoted meanwhile, and YCSB's calls go on.
     */
    private static AsymNvm connectTcp(Properties p, ExecutionMode mode) {
        String host = p.getProperty("asymnvm.host", "127.0.0.1");
        int port = Integer.parseInt(p.getProperty("asymnvm.port", "7000"));
        int frontendId = Integer.parseInt(p.getProperty("asymnvm.frontendId", "0"));
        String credentials = p.getProperty("asymnvm.credentials");
        FrontendOptions options = FrontendOptions.builder().mode(mode)
                .reconnectTimeoutMillis(Long.parseLong(p.getProperty("asymnvm.reconnectTimeoutMillis", "30000")))
                .conclude().withCredentials(credentials == null ? null : Path.of(credentials));
        String mirrors = p.getProperty("asymnvm.mirrors", "").trim();
        if (mirrors.isEmpty()) {
            return AsymNvm.connect(host, port, frontendId, options);
        }
        return AsymNvm.connect("tcp", host + ":" + port, List.of(mirrors.split(",")), frontendId, options);
    }

    @Override
    public void cleanup() throws DBException {
        synchronized (AsymNvmYcsbDb.class) {
            if (shared != null && --shared.users == 0) {
                try {
                    shared.nvm.close();
                } catch (RuntimeException e) {
                    throw new DBException("closing the frontend failed: " + e.getMessage(), e);
                } finally {
                    shared = null;
                }
            }
        }
    }

    @Override
    public Status read(String table, String key, Set<String> fields, Map<String, ByteIterator> result) {
        try {
            byte[] record = store.read(key);
            if (record == null) {
                return Status.NOT_FOUND;
            }
            for (Map.Entry<String, byte[]> f : YcsbRecord.decode(record, fields).entrySet()) {
                result.put(f.getKey(), new ByteArrayByteIterator(f.getValue()));
            }
            return Status.OK;
        } catch (RuntimeException e) {
            return failed("read " + key, e);
        }
    }

    @Override
    public Status scan(String table, String startKey, int count, Set<String> fields,
                       Vector<HashMap<String, ByteIterator>> result) {
        if (!btree) {
            return Status.NOT_IMPLEMENTED;
        }
        try {
            List<Map.Entry<String, byte[]>> rows = store.scan(startKey, count);
            for (Map.Entry<String, byte[]> row : rows) {
                HashMap<String, ByteIterator> values = new HashMap<>();
                for (Map.Entry<String, byte[]> f : YcsbRecord.decode(row.getValue(), fields).entrySet()) {
                    values.put(f.getKey(), new ByteArrayByteIterator(f.getValue()));
                }
                result.add(values);
            }
            return Status.OK;
        } catch (RuntimeException e) {
            return failed("scan from " + startKey, e);
        }
    }

    @Override
    public Status update(String table, String key, Map<String, ByteIterator> values) {
        try {
            return store.update(key, YcsbRecord.encode(bytes(values))) ? Status.OK : Status.NOT_FOUND;
        } catch (RuntimeException e) {
            return failed("update " + key, e);
        }
    }

    @Override
    public Status insert(String table, String key, Map<String, ByteIterator> values) {
        try {
            store.insert(key, YcsbRecord.encode(bytes(values)));
            return Status.OK;
        } catch (RuntimeException e) {
            return failed("insert " + key, e);
        }
    }

    @Override
    public Status delete(String table, String key) {
        try {
            return store.delete(key) ? Status.OK : Status.NOT_FOUND;
        } catch (RuntimeException e) {
            return failed("delete " + key, e);
        }
    }

    private static Map<String, byte[]> bytes(Map<String, ByteIterator> values) {
        Map<String, byte[]> out = new LinkedHashMap<>();
        for (Map.Entry<String, ByteIterator> v : values.entrySet()) {
            out.put(v.getKey(), v.getValue().toArray());
        }
        return out;
    }

    /** An operation failed: YCSB counts it (Return=ERROR); the first failures are printed with their cause. */
    private static Status failed(String what, RuntimeException e) {
        synchronized (AsymNvmYcsbDb.class) {
            if (printedFailures < 10) {
                printedFailures++;
                System.err.println("asymnvm ycsb: " + what + " failed: " + e);
            }
        }
        return Status.ERROR;
    }

    private static int printedFailures;
}
