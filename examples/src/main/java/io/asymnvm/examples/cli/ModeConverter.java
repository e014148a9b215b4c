package io.asymnvm.examples.cli;

import io.asymnvm.frontend.ExecutionMode;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/** Picocli converter of {@code --mode asymnvm|naive}: a bad name is a usage error listing the valid ones. */
public final class ModeConverter implements ITypeConverter<ExecutionMode> {
    @Override
    public ExecutionMode convert(String value) {
        try {
            return ExecutionMode.parse(value);
        } catch (IllegalArgumentException e) {
            throw new TypeConversionException(e.getMessage());
        }
    }
}
