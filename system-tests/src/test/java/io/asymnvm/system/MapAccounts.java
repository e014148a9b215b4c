package io.asymnvm.system;

import io.asymnvm.frontend.Transaction;
import io.asymnvm.structures.PersistentBTree;
import io.asymnvm.structures.PersistentHashMap;
import io.asymnvm.structures.PersistentMap;
import io.asymnvm.structures.codec.Codecs;

/**
 * The bank of the crash tests with its balances in a persistent B+tree or hash map (account → balance) whose root
 * is the frontend's root, so the power-failure rig drives the structures' operations (node splits, bucket
 * splits, pool allocation) through the same checks. {@link #balances()} also runs the structure's own
 * consistency check.
 */
final class MapAccounts implements Accounts, Ledger {
    /** Which structure holds the balances. */
    enum Kind { BTREE, HASH }

    private final Kind kind;

    MapAccounts(Kind kind) {
        this.kind = kind;
    }

    private PersistentMap<Long, Long> map(Transaction tx) {
        long root = tx.root();
        if (root == 0) {
            return null;
        }
        return kind == Kind.BTREE ? PersistentBTree.open(tx, root, Codecs.LONG, Codecs.LONG)
                : PersistentHashMap.open(tx, root, Codecs.LONG, Codecs.LONG);
    }

    @Override
    public long create(int count, long initial) {
        Transaction tx = Transaction.current();
        long root = kind == Kind.BTREE ? PersistentBTree.create(tx, "accounts", Codecs.LONG, Codecs.LONG)
                : PersistentHashMap.create(tx, "accounts", Codecs.LONG, Codecs.LONG);
        tx.setRoot(root);
        PersistentMap<Long, Long> m = map(tx);
        for (long i = 0; i < count; i++) {
            m.put(i, initial);
        }
        return root;
    }

    @Override
    public void transfer(int from, int to, long amount) {
        PersistentMap<Long, Long> m = map(Transaction.current());
        m.put((long) from, m.get((long) from) - amount);
        m.put((long) to, m.get((long) to) + amount);
    }

    @Override
    public long balance(int account) {
        return map(Transaction.current()).get((long) account);
    }

    @Override
    public long[] balances() {
        PersistentMap<Long, Long> m = map(Transaction.current());
        if (m == null) {
            return null;
        }
        m.verify();
        long[] out = new long[(int) m.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = m.get((long) i);
        }
        return out;
    }
}
