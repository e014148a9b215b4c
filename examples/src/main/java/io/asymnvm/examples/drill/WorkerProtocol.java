package io.asymnvm.examples.drill;

/**
 * The line protocol between a drill and its worker process (ASCII, one message per line, flushed at once).
 *
 * <pre>
 * worker stdout                                  meaning
 *   RECOVERED &lt;ms&gt; &lt;transactions&gt;               open + recover() took ms (decimal), re-executing that many
 *   BALANCES &lt;b0&gt; &lt;b1&gt; ...                      every balance after recovery (before any new transfer)
 *   BEGIN &lt;seq&gt; &lt;from&gt; &lt;to&gt; &lt;amount&gt;            about to call transfer(from, to, amount)
 *   ACK &lt;seq&gt;                                    the call returned: committed and durable
 *   ABORT &lt;seq&gt;                                  InsufficientFundsException: nothing changed
 *   CLOSED                                       frontend closed cleanly (after STOP, or a verify-only run)
 *   ERROR &lt;message&gt;                              anything else went wrong; the worker exits 1
 * worker stdin
 *   STOP                                         finish the current transfer, close, print CLOSED, exit 0
 *   (end of stream)                              the drill is gone: exit at once without closing
 * </pre>
 */
final class WorkerProtocol {
    static final String RECOVERED = "RECOVERED";
    static final String BALANCES = "BALANCES";
    static final String BEGIN = "BEGIN";
    static final String ACK = "ACK";
    static final String ABORT = "ABORT";
    static final String CLOSED = "CLOSED";
    static final String ERROR = "ERROR";
    static final String STOP = "STOP";
    /** Exit code of a worker whose drill went away (standard input closed). */
    static final int EXIT_ORPHANED = 3;

    private WorkerProtocol() {
    }
}
