package io.asymnvm.examples.drill;

import io.asymnvm.examples.bank.Bank;
import io.asymnvm.examples.bank.BankImpl;
import io.asymnvm.examples.bank.InsufficientFundsException;
import io.asymnvm.frontend.AsymNvm;
import io.asymnvm.frontend.FrontendOptions;
import io.asymnvm.frontend.tx.TransactionEngine.RecoveryReport;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The frontend side of a drill, run in its own JVM by {@code asymnvm drill-worker}: connects to the backend as
 * frontend {@code frontendId}, recovers eagerly (re-executing what its previous incarnation committed but the
 * backend had not applied) and times open + recover, reports the balances, then runs seeded random transfers until
 * told to stop, announcing each before the call and its outcome after it (see {@link WorkerProtocol}). Every line
 * is flushed before the next step, so a line the drill has read describes something that really happened.
 *
 * <p>One transfer in {@value #OVERDRAW_ONE_IN} asks for more than the whole bank holds and always aborts; others
 * move 1 to a quarter of the initial balance and abort when the source runs short.
 *
 * @param redoBatchTransactions redo is shipped every this many transactions (or {@code redoMaxDelayMicros}), so a
 *                              kill finds up to that many committed but unapplied transactions to recover
 * @param credentials           the backend's credentials file (null: attach without a credential)
 * @param zk                    ZooKeeper of the cluster {@value DrillCluster#NAME}: connect through its configuration
 *                              ({@link AsymNvm#connectCluster}) instead of to {@code host:port}; null otherwise
 */
public record DrillWorker(String host, int port, int frontendId, int accounts, long initialBalance, long seed,
                          boolean verifyOnly, long reconnectTimeoutMillis, int redoBatchTransactions,
                          long redoMaxDelayMicros, java.nio.file.Path credentials, String zk) {
    static final int OVERDRAW_ONE_IN = 64;

    /** Runs the worker; returns the exit code. Lines go to {@code out}, commands come from {@code in}. */
    public int run(PrintStream out, InputStream in) {
        AtomicBoolean stop = new AtomicBoolean();
        Thread commands = new Thread(() -> readCommands(in, stop), "drill-worker-stdin");
        commands.setDaemon(true);
        commands.start();

        FrontendOptions options = FrontendOptions.builder().reconnectTimeoutMillis(reconnectTimeoutMillis)
                .redoBatch(redoBatchTransactions, FrontendOptions.defaults().redoBatchBytes(), redoMaxDelayMicros)
                .credentials(credentials).conclude();
        long start = System.nanoTime();
        AsymNvm nvm = zk == null ? AsymNvm.connect(host, port, frontendId, options)
                : AsymNvm.connectCluster(zk, DrillCluster.NAME, frontendId, options);
        try {
            Bank bank = nvm.transactional(Bank.class, new BankImpl());
            RecoveryReport recovery = nvm.recover();
            double millis = (System.nanoTime() - start) / 1e6;
            emit(out, String.format(Locale.ROOT, "%s %.3f %d", WorkerProtocol.RECOVERED, millis,
                    recovery.transactions()));
            bank.open(accounts, initialBalance);
            StringBuilder balances = new StringBuilder(WorkerProtocol.BALANCES);
            for (int i = 0; i < accounts; i++) {
                balances.append(' ').append(bank.balance(i));
            }
            emit(out, balances.toString());
            if (!verifyOnly) {
                transfer(bank, out, stop);
            }
        } catch (RuntimeException e) {
            nvm.crash();
            throw e;
        }
        nvm.close();
        emit(out, WorkerProtocol.CLOSED);
        return 0;
    }

    private void transfer(Bank bank, PrintStream out, AtomicBoolean stop) {
        Random random = new Random(seed);
        long maxAmount = Math.max(1, initialBalance / 4);
        long seq = 0;
        while (!stop.get()) {
            int from = random.nextInt(accounts);
            int to = random.nextInt(accounts - 1);
            if (to >= from) {
                to++;
            }
            long amount = random.nextInt(OVERDRAW_ONE_IN) == 0
                    ? initialBalance * accounts + 1
                    : 1 + (long) (random.nextDouble() * maxAmount);
            seq++;
            emit(out, WorkerProtocol.BEGIN + " " + seq + " " + from + " " + to + " " + amount);
            String outcome;
            try {
                bank.transfer(from, to, amount);
                outcome = WorkerProtocol.ACK;
            } catch (InsufficientFundsException e) {
                outcome = WorkerProtocol.ABORT;
            }
            emit(out, outcome + " " + seq);
        }
    }

    private static void emit(PrintStream out, String line) {
        out.print(line + "\n");
        out.flush();
    }

    private static void readCommands(InputStream in, AtomicBoolean stop) {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.US_ASCII))) {
            String line;
            while ((line = r.readLine()) != null) {
                if (WorkerProtocol.STOP.equals(line.strip())) {
                    stop.set(true);
                }
            }
        } catch (IOException e) {
            // treated as the end of the stream
        }
        // The drill is gone (or closed our input): nobody will read what we print, nor stop us. Leave at once,
        // as a crash would; the next incarnation recovers.
        Runtime.getRuntime().halt(WorkerProtocol.EXIT_ORPHANED);
    }
}
