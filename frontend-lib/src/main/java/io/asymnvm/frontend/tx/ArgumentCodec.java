package io.asymnvm.frontend.tx;

import com.esotericsoftware.kryo.Kryo;
import com.esotericsoftware.kryo.KryoException;
import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;
import com.esotericsoftware.kryo.util.DefaultInstantiatorStrategy;
import org.objenesis.strategy.StdInstantiatorStrategy;

/**
 * Serializes the arguments of a transactional call into its semantic record (Kryo, class names written, so no
 * registration dictionary must survive a crash). One Kryo per thread.
 */
public final class ArgumentCodec {
    private static final ThreadLocal<Kryo> KRYO = ThreadLocal.withInitial(() -> {
        Kryo k = new Kryo();
        k.setRegistrationRequired(false);
        k.setReferences(true);
        k.setInstantiatorStrategy(new DefaultInstantiatorStrategy(new StdInstantiatorStrategy()));
        return k;
    });

    private ArgumentCodec() {
    }

    public static byte[] encode(Object[] args) {
        Output out = new Output(64, -1);
        Kryo k = KRYO.get();
        int n = args == null ? 0 : args.length;
        out.writeVarInt(n, true);
        for (int i = 0; i < n; i++) {
            try {
                k.writeClassAndObject(out, args[i]);
            } catch (KryoException e) {
                throw new IllegalArgumentException("argument " + i + " of type "
                        + (args[i] == null ? "null" : args[i].getClass().getName())
                        + " cannot be serialized for the semantic log: " + e.getMessage(), e);
            }
        }
        return out.toBytes();
    }

    public static Object[] decode(byte[] bytes) {
        Input in = new Input(bytes);
        Kryo k = KRYO.get();
        int n = in.readVarInt(true);
        Object[] args = new Object[n];
        for (int i = 0; i < n; i++) {
            args[i] = k.readClassAndObject(in);
        }
        return args;
    }
}
