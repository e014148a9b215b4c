package io.asymnvm.frontend.tx;

import com.esotericsoftware.kryo.Kryo;
import com.esotericsoftware.kryo.Registration;
import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;
import com.esotericsoftware.kryo.util.DefaultClassResolver;
import com.esotericsoftware.kryo.util.DefaultInstantiatorStrategy;
import com.esotericsoftware.kryo.util.MapReferenceResolver;
import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.layout.SemanticRecordLayout;
import org.objenesis.strategy.StdInstantiatorStrategy;

/**
 * Serializes the arguments of a transactional call into its semantic record and back (Kryo). Class names are
 * written, never Kryo's order-assigned registration ids, so no dictionary must survive a crash; every class name
 * goes through the frontend's {@link ArgumentClasses} allow-list in both directions:
 * <ul>
 *   <li>decoding resolves a name only through the list, before anything is loaded: a class that is not on it is
 *       never loaded, initialized or instantiated, and the decode fails with
 *       {@link ErrorCode#CLASS_NOT_REGISTERED} naming it;</li>
 *   <li>encoding refuses the same classes (the runtime class of every argument, field and element that Kryo
 *       writes), so the developer learns at the call which class to allow.</li>
 * </ul>
 * One Kryo per thread and codec; a Kryo that failed mid-operation is dropped, never reused.
 */
public final class ArgumentCodec {
    private final ArgumentClasses classes;
    private final ThreadLocal<Kryo> kryo;
    /**
     * One output buffer per thread, reused by every encode (issue 8: no buffer grown anew per call); one that grew
     * past {@link #KEPT_OUTPUT_BYTES} is dropped after the call rather than kept.
     */
    private final ThreadLocal<Output> outputs = ThreadLocal.withInitial(() -> new Output(256, -1));
    static final int KEPT_OUTPUT_BYTES = 64 * 1024;

    public ArgumentCodec(ArgumentClasses classes) {
        this.classes = classes;
        this.kryo = ThreadLocal.withInitial(this::newKryo);
    }

    public ArgumentClasses classes() {
        return classes;
    }

    private Kryo newKryo() {
        Kryo k = new Kryo(new AllowListClassResolver(classes), new MapReferenceResolver());
        k.setRegistrationRequired(false); // implicit registrations pass the allow-list; names are written
        k.setReferences(true);
        k.setInstantiatorStrategy(new DefaultInstantiatorStrategy(new StdInstantiatorStrategy()));
        return k;
    }

    /**
     * Encodes {@code args}. A class not on the allow-list fails with {@link ErrorCode#CLASS_NOT_REGISTERED}
     * naming the argument and the class; any other failure is an {@link IllegalArgumentException}.
     */
    public byte[] encode(Object[] args) {
        Output out = outputs.get();
        try {
            return encode(out, args).toBytes();
        } finally {
            release(out);
        }
    }

    /**
     * Encodes {@code args} (as {@link #encode} does, same failures) straight into a new semantic record image
     * ({@link SemanticRecordLayout#allocate}) whose header is filled when it is posted: the record a call logs is
     * the only array its encoding makes (issue 8: one copy of the arguments less per call).
     */
    public byte[] encodeRecord(Object[] args) {
        Output out = outputs.get();
        try {
            encode(out, args);
            byte[] record = SemanticRecordLayout.allocate(out.position());
            System.arraycopy(out.getBuffer(), 0, record, SemanticRecordLayout.HEADER_LENGTH, out.position());
            return record;
        } finally {
            release(out);
        }
    }

    /** Keeps this thread's output buffer for the next call unless it grew past {@link #KEPT_OUTPUT_BYTES}. */
    private void release(Output out) {
        if (out.getBuffer().length > KEPT_OUTPUT_BYTES) {
            outputs.remove();
        }
    }

    /** Encodes {@code args} into {@code out} from its start; the encoding is {@code out}'s first bytes. */
    private Output encode(Output out, Object[] args) {
        out.reset();
        Kryo k = kryo.get();
        int n = args == null ? 0 : args.length;
        out.writeVarInt(n, true);
        for (int i = 0; i < n; i++) {
            try {
                k.writeClassAndObject(out, args[i]);
            } catch (RuntimeException e) {
                kryo.remove();
                String what = "argument " + i + " of type " + (args[i] == null ? "null" : args[i].getClass().getName());
                AsymNvmException refused = refusal(e);
                if (refused != null && args[i] != null && (java.lang.reflect.Proxy.isProxyClass(args[i].getClass())
                        || args[i].getClass().isHidden())) {
                    throw new AsymNvmException(ErrorCode.CLASS_NOT_REGISTERED, what + " is a proxy or a lambda: it "
                            + "has no stable class to decode again in recovery and cannot be allowed; pass data", e);
                }
                if (refused != null) {
                    throw new AsymNvmException(ErrorCode.CLASS_NOT_REGISTERED, what + ": " + refused.detail(), e);
                }
                throw new IllegalArgumentException(what + " cannot be serialized for the semantic log: "
                        + e.getMessage(), e);
            }
        }
        return out;
    }

    /**
     * Decodes arguments encoded by {@link #encode}. A class name outside the allow-list fails with
     * {@link ErrorCode#CLASS_NOT_REGISTERED} naming the class, without loading it; other damage fails with
     * Kryo's exception.
     */
    public Object[] decode(byte[] bytes) {
        return decode(bytes, 0, bytes.length);
    }

    /** Decodes the arguments {@link #encode} wrote, found at {@code offset} of {@code bytes}, {@code length} long. */
    public Object[] decode(byte[] bytes, int offset, int length) {
        Input in = new Input(bytes, offset, length);
        Kryo k = kryo.get();
        try {
            int n = in.readVarInt(true);
            Object[] args = new Object[n];
            for (int i = 0; i < n; i++) {
                args[i] = k.readClassAndObject(in);
            }
            return args;
        } catch (RuntimeException | LinkageError e) { // Kryo reports some failures as errors
            kryo.remove();
            AsymNvmException refused = refusal(e);
            if (refused != null) {
                throw refused;
            }
            throw e;
        }
    }

    /** The allow-list refusal behind {@code e} (Kryo wraps what a nested serializer throws), or null. */
    private static AsymNvmException refusal(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof AsymNvmException a && a.errorCode() == ErrorCode.CLASS_NOT_REGISTERED) {
                return a;
            }
        }
        return null;
    }

    /** Resolves written class names only through the allow-list; refuses implicit registration of others. */
    private static final class AllowListClassResolver extends DefaultClassResolver {
        private final ArgumentClasses classes;

        AllowListClassResolver(ArgumentClasses classes) {
            this.classes = classes;
        }

        @Override
        protected Class<?> getTypeByName(String className) {
            return classes.resolve(className); // called before DefaultClassResolver would load anything
        }

        @Override
        @SuppressWarnings("rawtypes")
        public Registration registerImplicit(Class type) {
            if (!classes.isAllowed(type)) {
                throw classes.refusal(type.getName());
            }
            return super.registerImplicit(type);
        }
    }
}
