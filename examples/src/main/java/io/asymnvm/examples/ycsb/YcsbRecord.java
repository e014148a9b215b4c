package io.asymnvm.examples.ycsb;

import java.nio.ByteBuffer;
import java.nio.BufferUnderflowException;
import java.nio.ByteOrder;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * A YCSB record (field name → bytes) as one value of a persistent map, little-endian:
 * {@code version(1) | fieldCount(2) | fieldCount × (nameLength(2) | name (UTF-8) | valueLength(4) | value)}.
 * Decoding checks every length against what is left, so a damaged value is reported, never misread.
 */
public final class YcsbRecord {
    /** Format version stored in the first byte. */
    public static final byte VERSION = 1;
    /** Most fields in one record (the count is an unsigned 16-bit number). */
    public static final int MAX_FIELDS = 0xFFFF;

    private YcsbRecord() {
    }

    /** Encodes {@code fields} in their iteration order. */
    public static byte[] encode(Map<String, byte[]> fields) {
        if (fields.size() > MAX_FIELDS) {
            throw new IllegalArgumentException("a record holds at most " + MAX_FIELDS + " fields, not "
                    + fields.size());
        }
        int length = 3;
        byte[][] names = new byte[fields.size()][];
        int i = 0;
        for (Map.Entry<String, byte[]> f : fields.entrySet()) {
            names[i] = f.getKey().getBytes(StandardCharsets.UTF_8);
            if (names[i].length > 0xFFFF) {
                throw new IllegalArgumentException("field name of " + names[i].length + " bytes; at most 65535");
            }
            length += 2 + names[i].length + 4 + f.getValue().length;
            i++;
        }
        ByteBuffer b = ByteBuffer.allocate(length).order(ByteOrder.LITTLE_ENDIAN);
        b.put(VERSION).putShort((short) fields.size());
        i = 0;
        for (Map.Entry<String, byte[]> f : fields.entrySet()) {
            b.putShort((short) names[i].length).put(names[i]);
            b.putInt(f.getValue().length).put(f.getValue());
            i++;
        }
        return b.array();
    }

    /** Every field of an encoded record. */
    public static Map<String, byte[]> decode(byte[] record) {
        return decode(record, null);
    }

    /** The fields of an encoded record named in {@code wanted} (all of them if null). */
    public static Map<String, byte[]> decode(byte[] record, Set<String> wanted) {
        if (record == null || record.length < 3) {
            throw malformed(record, "shorter than its 3-byte header");
        }
        ByteBuffer b = ByteBuffer.wrap(record).order(ByteOrder.LITTLE_ENDIAN);
        byte version = b.get();
        if (version != VERSION) {
            throw malformed(record, "version " + version + ", expected " + VERSION);
        }
        int count = Short.toUnsignedInt(b.getShort());
        Map<String, byte[]> out = new LinkedHashMap<>();
        try {
            for (int i = 0; i < count; i++) {
                int nameLength = Short.toUnsignedInt(b.getShort());
                if (nameLength > b.remaining()) {
                    throw malformed(record, "field " + i + " name of " + nameLength + " bytes at offset "
                            + (b.position() - 2) + ", only " + b.remaining() + " left");
                }
                byte[] name = new byte[nameLength];
                b.get(name);
                int valueLength = b.getInt();
                if (valueLength < 0 || valueLength > b.remaining()) {
                    throw malformed(record, "field " + i + " value of " + valueLength + " bytes at offset "
                            + (b.position() - 4) + ", only " + b.remaining() + " left");
                }
                byte[] value = new byte[valueLength];
                b.get(value);
                String field = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                        .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(name)).toString();
                if (wanted == null || wanted.contains(field)) {
                    out.put(field, value);
                }
            }
        } catch (BufferUnderflowException e) {
            throw malformed(record, "truncated after " + out.size() + " of " + count + " fields");
        } catch (CharacterCodingException e) {
            throw malformed(record, "a field name is not UTF-8");
        }
        if (b.hasRemaining()) {
            throw malformed(record, b.remaining() + " bytes after the last of " + count + " fields");
        }
        return out;
    }

    private static IllegalArgumentException malformed(byte[] record, String why) {
        return new IllegalArgumentException("malformed YCSB record of " + (record == null ? "null" : record.length
                + " bytes") + ": " + why);
    }
}
