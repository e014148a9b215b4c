package io.asymnvm.examples.ycsb;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class YcsbRecordTest {

    private static Map<String, byte[]> record() {
        Map<String, byte[]> fields = new LinkedHashMap<>();
        for (int i = 0; i < 10; i++) {
            byte[] v = new byte[100];
            Arrays.fill(v, (byte) ('a' + i));
            fields.put("field" + i, v);
        }
        fields.put("empty", new byte[0]);
        fields.put("ünïcode", "x".getBytes(StandardCharsets.UTF_8));
        return fields;
    }

    @Test
    void shouldRoundTripEveryFieldInOrder() {
        Map<String, byte[]> fields = record();
        Map<String, byte[]> back = YcsbRecord.decode(YcsbRecord.encode(fields));
        assertEquals(fields.keySet().stream().toList(), back.keySet().stream().toList());
        fields.forEach((k, v) -> assertArrayEquals(v, back.get(k), k));
    }

    @Test
    void shouldDecodeOnlyTheWantedFields() {
        Map<String, byte[]> back = YcsbRecord.decode(YcsbRecord.encode(record()), Set.of("field3", "absent"));
        assertEquals(Set.of("field3"), back.keySet());
        assertEquals('d', back.get("field3")[0]);
    }

    @Test
    void shouldRejectEveryTruncationAndTrailingGarbageNamingTheProblem() {
        byte[] encoded = YcsbRecord.encode(record());
        for (int cut = 0; cut < encoded.length; cut++) {
            byte[] truncated = Arrays.copyOf(encoded, cut);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> YcsbRecord.decode(truncated), "truncated to " + cut);
            assertTrue(e.getMessage().startsWith("malformed YCSB record of " + cut + " bytes"), e.getMessage());
        }
        byte[] longer = Arrays.copyOf(encoded, encoded.length + 1);
        assertTrue(assertThrows(IllegalArgumentException.class, () -> YcsbRecord.decode(longer)).getMessage()
                .contains("1 bytes after the last of 12 fields"));
        byte[] version = encoded.clone();
        version[0] = 9;
        assertTrue(assertThrows(IllegalArgumentException.class, () -> YcsbRecord.decode(version)).getMessage()
                .contains("version 9"));
    }
}
