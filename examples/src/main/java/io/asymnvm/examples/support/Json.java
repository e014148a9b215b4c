package io.asymnvm.examples.support;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.math.BigDecimal;
import java.math.RoundingMode;

/** The command line's JSON output, written by Jackson: objects with keys in insertion order. */
public final class Json {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    private Json() {
    }

    /** A new empty object; {@code put} keeps the order of the keys. */
    public static ObjectNode object() {
        return MAPPER.createObjectNode();
    }

    /** {@code value} rounded to {@code digits} decimals, as a JSON number (no binary tail such as 0.30000000004). */
    public static BigDecimal decimal(double value, int digits) {
        if (Double.isNaN(value) || Double.isInfinite(value)) {
            throw new IllegalArgumentException("not a JSON number: " + value);
        }
        return BigDecimal.valueOf(value).setScale(digits, RoundingMode.HALF_EVEN);
    }

    /** The compact JSON text of {@code node}. */
    public static String write(ObjectNode node) {
        try {
            return MAPPER.writeValueAsString(node);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot write JSON", e);
        }
    }
}
