package io.asymnvm.examples.support;

import picocli.CommandLine;

import java.util.Arrays;
import java.util.Iterator;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * Enums named on the command line by their lower-case constant names: parsing (case-insensitive, a bad name's
 * message lists the valid ones), a picocli converter that makes a bad name a usage error, and completion
 * candidates for {@code ${COMPLETION-CANDIDATES}}.
 */
public final class CliEnum {
    private CliEnum() {
    }

    public static String cliName(Enum<?> e) {
        return e.name().toLowerCase(Locale.ROOT);
    }

    public static <E extends Enum<E>> E parse(Class<E> type, String what, String name) {
        for (E e : type.getEnumConstants()) {
            if (cliName(e).equalsIgnoreCase(name)) {
                return e;
            }
        }
        throw new IllegalArgumentException("unknown " + what + " '" + name + "' (expected one of: " + names(type)
                + ")");
    }

    public static <E extends Enum<E>> String names(Class<E> type) {
        return Arrays.stream(type.getEnumConstants()).map(CliEnum::cliName).collect(Collectors.joining(", "));
    }

    /** Base of the per-enum picocli converters. */
    public abstract static class Converter<E extends Enum<E>> implements CommandLine.ITypeConverter<E> {
        private final Class<E> type;
        private final String what;

        protected Converter(Class<E> type, String what) {
            this.type = type;
            this.what = what;
        }

        @Override
        public E convert(String value) {
            try {
                return parse(type, what, value);
            } catch (IllegalArgumentException e) {
                throw new CommandLine.TypeConversionException(e.getMessage());
            }
        }
    }

    /** Base of the per-enum completion candidate lists. */
    public abstract static class Names<E extends Enum<E>> implements Iterable<String> {
        private final Class<E> type;

        protected Names(Class<E> type) {
            this.type = type;
        }

        @Override
        public Iterator<String> iterator() {
            return Arrays.stream(type.getEnumConstants()).map(CliEnum::cliName).iterator();
        }
    }
}
