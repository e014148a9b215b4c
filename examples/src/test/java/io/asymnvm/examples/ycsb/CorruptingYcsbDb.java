package io.asymnvm.examples.ycsb;

import site.ycsb.ByteArrayByteIterator;
import site.ycsb.ByteIterator;
import site.ycsb.Status;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The binding with two faults, to prove that YCSB's checks reach the report: every read returns its first field
 * with one byte flipped (YCSB's value check must fail), and every tenth update fails.
 */
public final class CorruptingYcsbDb extends AsymNvmYcsbDb {
    private static final AtomicLong UPDATES = new AtomicLong();

    @Override
    public Status read(String table, String key, Set<String> fields, Map<String, ByteIterator> result) {
        Status s = super.read(table, key, fields, result);
        if (s.isOk() && !result.isEmpty()) {
            Map.Entry<String, ByteIterator> first = result.entrySet().iterator().next();
            byte[] bytes = first.getValue().toArray();
            bytes[0] ^= 0x20;
            result.put(first.getKey(), new ByteArrayByteIterator(bytes));
        }
        return s;
    }

    @Override
    public Status update(String table, String key, Map<String, ByteIterator> values) {
        if (UPDATES.incrementAndGet() % 10 == 0) {
            return Status.ERROR;
        }
        return super.update(table, key, values);
    }
}
