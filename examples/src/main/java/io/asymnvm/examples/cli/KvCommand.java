package io.asymnvm.examples.cli;

import io.asymnvm.core.layout.RootDirectoryLayout;
import io.asymnvm.examples.kv.KeyValueStore;
import io.asymnvm.examples.kv.KeyValueStoreImpl;
import io.asymnvm.examples.kv.LoadPattern;
import io.asymnvm.examples.kv.StructureKind;
import io.asymnvm.frontend.AsymNvm;
import io.asymnvm.frontend.FrontendOptions;
import me.tongfei.progressbar.ProgressBar;
import me.tongfei.progressbar.ProgressBarBuilder;
import me.tongfei.progressbar.ProgressBarStyle;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * {@code asymnvm kv}: one key-value action against a running backend ({@code asymnvm backend}), as frontend
 * {@code --frontend-id}, on the named hash map or B+tree of a {@link KeyValueStore}. The frontend attaches (and
 * recovers what a crashed previous incarnation of the same id left), runs the action, and detaches cleanly, so
 * everything it acknowledged is applied at the backend when the command exits.
 *
 * <p>{@code load COUNT} writes {@link LoadPattern}'s keys {@code key0..key<COUNT-1>} ({@code --batch} puts per
 * transaction); {@code verify COUNT} reads them back and exits 1 on any missing or different value, printing the
 * first ones. Exit codes: 0 done, 1 runtime failure, absent key ({@code get}, {@code del}) or failed
 * verification, 2 bad usage.
 */
@Command(name = "kv", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Key-value operations on a named hash map or B+tree of a running backend.",
            "Actions:",
            "  put KEY VALUE   store VALUE under KEY",
            "  get KEY         print the value of KEY (exit 1 if absent)",
            "  del KEY         delete KEY (exit 1 if absent)",
            "  scan FROM TO    print 'key<TAB>value' for FROM <= key <= TO in key order",
            "                  (btree only; at most --limit entries)",
            "  load COUNT      write key0..key<COUNT-1> with deterministic values",
            "  verify COUNT    check key0..key<COUNT-1>; exit 1 on any mismatch"})
public final class KvCommand implements Callable<Integer> {
    static final int MAX_BATCH = 10_000;
    static final int MAX_FRONTEND_ID = 1023;
    static final long MAX_COUNT = 1_000_000_000L;
    static final int MAX_REPORTED_MISMATCHES = 10;
    private static final int SCAN_CHUNK = 1000;

    @Spec
    CommandSpec spec;

    @Option(names = "--backend", required = true, paramLabel = "HOST:PORT",
            description = "Backend to attach to, e.g. 127.0.0.1:7000.")
    String backend;

    @Option(names = "--frontend-id", required = true, paramLabel = "N",
            description = "This frontend's identity (0..max frontends of the backend - 1).")
    int frontendId;

    @Option(names = "--credentials", paramLabel = "FILE",
            description = "Credentials file with this frontend's secret (the backend's or an exported one).")
    java.nio.file.Path credentials;

    @Option(names = "--tls-ca", paramLabel = "PEM", description = "TLS: CAs that sign the backend's certificate.")
    java.nio.file.Path tlsCa;

    @Option(names = "--tls-cert", paramLabel = "PEM", description = "Mutual TLS: this client's certificate chain.")
    java.nio.file.Path tlsCert;

    @Option(names = "--tls-key", paramLabel = "PEM", description = "Mutual TLS: the client certificate's key (PKCS#8).")
    java.nio.file.Path tlsKey;

    @Option(names = "--structure", defaultValue = "hash", converter = StructureKind.Converter.class,
            completionCandidates = StructureKind.Names.class,
            description = "Structure: ${COMPLETION-CANDIDATES}. Default: ${DEFAULT-VALUE}.")
    StructureKind structure;

    @Option(names = "--name", description = "Name of the structure. Default: kv-<structure>.")
    String name;

    @Option(names = "--batch", defaultValue = "100",
            description = "Keys per transaction for load and verify (1.." + MAX_BATCH + "). Default: "
                    + "${DEFAULT-VALUE}.")
    int batch;

    @Option(names = "--limit", defaultValue = "100",
            description = "Most entries scan prints. Default: ${DEFAULT-VALUE}.")
    int limit;

    @Parameters(index = "0", paramLabel = "ACTION", description = "put, get, del, scan, load or verify.")
    String action;

    @Parameters(index = "1..*", paramLabel = "ARG", arity = "0..*", description = "The action's arguments.")
    List<String> arguments = new ArrayList<>();

    private String host;
    private int port;

    @Override
    public Integer call() {
        checkUsage();
        String structureName = structureName();
        try (AsymNvm nvm = AsymNvm.connect(host, port, frontendId,
                FrontendOptions.builder().credentials(credentials)
                        .tls(tlsCa == null ? null : io.asymnvm.core.fabric.tcp.TcpTls.client(tlsCa, tlsCert, tlsKey))
                        .conclude())) {
            KeyValueStore store = nvm.transactional(KeyValueStore.class,
                    new KeyValueStoreImpl(nvm, structure, structureName));
            String where = structure.displayName() + " '" + structureName + "'";
            return switch (action) {
                case "put" -> put(store);
                case "get" -> get(store, where);
                case "del" -> delete(store, where);
                case "scan" -> scan(store);
                case "load" -> load(store, count(), where);
                case "verify" -> verify(store, count(), where);
                default -> throw new IllegalStateException("unchecked action " + action);
            };
        }
    }

    private void checkUsage() {
        int expected = switch (action) {
            case "put", "scan" -> 2;
            case "get", "del", "load", "verify" -> 1;
            default -> throw usage("unknown action '" + action + "' (expected one of: put, get, del, scan, load, "
                    + "verify)");
        };
        if (arguments.size() != expected) {
            throw usage("'" + action + "' takes " + expected + " argument" + (expected == 1 ? "" : "s") + ", got "
                    + arguments.size());
        }
        if (action.equals("scan") && !structure.ordered()) {
            throw usage("scan needs an ordered structure: use --structure btree (a " + structure.displayName()
                    + " keeps no key order)");
        }
        if (action.equals("load") || action.equals("verify")) {
            count();
        }
        parseBackend();
        if (frontendId < 0 || frontendId > MAX_FRONTEND_ID) {
            throw usage("Invalid value for option '--frontend-id': " + frontendId + " is outside [0, "
                    + MAX_FRONTEND_ID + "]");
        }
        if (batch < 1 || batch > MAX_BATCH) {
            throw usage("Invalid value for option '--batch': " + batch + " is outside [1, " + MAX_BATCH + "]");
        }
        if (limit < 1) {
            throw usage("Invalid value for option '--limit': " + limit + " is not positive");
        }
        try {
            RootDirectoryLayout.checkName(structureName());
        } catch (IllegalArgumentException e) {
            throw usage("Invalid value for option '--name': " + e.getMessage());
        }
    }

    private String structureName() {
        return name != null ? name : "kv-" + structure.cliName();
    }

    private void parseBackend() {
        int colon = backend.lastIndexOf(':');
        String h = colon < 0 ? "" : backend.substring(0, colon);
        if (h.startsWith("[") && h.endsWith("]")) {
            h = h.substring(1, h.length() - 1);
        }
        int p = -1;
        try {
            p = colon < 0 ? -1 : Integer.parseInt(backend.substring(colon + 1));
        } catch (NumberFormatException e) {
            // reported below
        }
        if (h.isEmpty() || p < 1 || p > 65535) {
            throw usage("Invalid value for option '--backend': '" + backend + "' is not HOST:PORT with a port in "
                    + "[1, 65535]");
        }
        host = h;
        port = p;
    }

    private long count() {
        String text = arguments.get(0);
        long n;
        try {
            n = Long.parseLong(text);
        } catch (NumberFormatException e) {
            throw usage("COUNT of '" + action + "' is not a number: '" + text + "'");
        }
        if (n < 1 || n > MAX_COUNT) {
            throw usage("COUNT of '" + action + "' is outside [1, " + MAX_COUNT + "]: " + n);
        }
        return n;
    }

    private ParameterException usage(String message) {
        return new ParameterException(spec.commandLine(), message);
    }

    private int put(KeyValueStore store) {
        store.put(arguments.get(0), arguments.get(1));
        out().println("OK");
        out().flush();
        return 0;
    }

    private int get(KeyValueStore store, String where) {
        String value = store.get(arguments.get(0));
        if (value == null) {
            return absent(where);
        }
        out().println(value);
        out().flush();
        return 0;
    }

    private int delete(KeyValueStore store, String where) {
        if (store.delete(arguments.get(0)) == null) {
            return absent(where);
        }
        out().println("deleted");
        out().flush();
        return 0;
    }

    private int absent(String where) {
        PrintWriter err = spec.commandLine().getErr();
        err.println("asymnvm kv: no key '" + arguments.get(0) + "' in " + where);
        err.flush();
        return 1;
    }

    /** Pages through the range in chunks (one transaction each), printing at most {@code --limit} entries. */
    private int scan(KeyValueStore store) {
        String from = arguments.get(0);
        String to = arguments.get(1);
        PrintWriter out = out();
        boolean inclusive = true;
        int printed = 0;
        boolean more = false;
        while (true) {
            int want = Math.min(SCAN_CHUNK, limit - printed);
            List<Map.Entry<String, String>> chunk = store.scan(from, inclusive, to, want == 0 ? 1 : want);
            if (want == 0) {
                more = !chunk.isEmpty();
                break;
            }
            for (Map.Entry<String, String> e : chunk) {
                out.println(e.getKey() + "\t" + e.getValue());
            }
            printed += chunk.size();
            if (chunk.size() < want) {
                break;
            }
            from = chunk.get(chunk.size() - 1).getKey();
            inclusive = false;
        }
        out.flush();
        if (more) {
            PrintWriter err = spec.commandLine().getErr();
            err.println("asymnvm kv: scan stopped after --limit " + limit + " entries; more keys are in the range");
            err.flush();
        }
        return 0;
    }

    private int load(KeyValueStore store, long count, String where) {
        long start = System.nanoTime();
        long transactions = 0;
        try (ProgressBar bar = progressBar("load", count)) {
            for (long from = 0; from < count; from += batch) {
                int n = (int) Math.min(batch, count - from);
                String[] keys = new String[n];
                String[] values = new String[n];
                for (int i = 0; i < n; i++) {
                    keys[i] = LoadPattern.key(from + i);
                    values[i] = LoadPattern.value(from + i);
                }
                store.putAll(keys, values);
                transactions++;
                bar.stepBy(n);
            }
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        out().printf(Locale.ROOT, "loaded %d keys into %s in %.2f s (%.0f keys/s, %d transactions of up to %d)%n",
                count, where, seconds, count / seconds, transactions, batch);
        out().flush();
        return 0;
    }

    private int verify(KeyValueStore store, long count, String where) {
        long start = System.nanoTime();
        long mismatches = 0;
        List<String> reported = new ArrayList<>();
        try (ProgressBar bar = progressBar("verify", count)) {
            for (long from = 0; from < count; from += batch) {
                int n = (int) Math.min(batch, count - from);
                String[] keys = new String[n];
                for (int i = 0; i < n; i++) {
                    keys[i] = LoadPattern.key(from + i);
                }
                String[] values = store.getAll(keys);
                for (int i = 0; i < n; i++) {
                    String expected = LoadPattern.value(from + i);
                    if (!expected.equals(values[i])) {
                        mismatches++;
                        if (reported.size() < MAX_REPORTED_MISMATCHES) {
                            reported.add(keys[i] + ": expected \"" + expected + "\", "
                                    + (values[i] == null ? "missing" : "found \"" + values[i] + "\""));
                        }
                    }
                }
                bar.stepBy(n);
            }
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        PrintWriter out = out();
        if (mismatches == 0) {
            out.printf(Locale.ROOT, "verified %d keys in %s in %.2f s (%.0f keys/s): all match%n", count, where,
                    seconds, count / seconds);
        } else {
            out.printf(Locale.ROOT, "verification FAILED: %d of %d keys in %s missing or different%n", mismatches,
                    count, where);
            reported.forEach(m -> out.println("  " + m));
            if (mismatches > reported.size()) {
                out.printf(Locale.ROOT, "  ... and %d more%n", mismatches - reported.size());
            }
        }
        out.flush();
        return mismatches == 0 ? 0 : 1;
    }

    private PrintWriter out() {
        return spec.commandLine().getOut();
    }

    private static ProgressBar progressBar(String task, long max) {
        return new ProgressBarBuilder().setTaskName(task).setInitialMax(max).setStyle(ProgressBarStyle.ASCII)
                .setUpdateIntervalMillis(250).showSpeed().build();
    }
}
