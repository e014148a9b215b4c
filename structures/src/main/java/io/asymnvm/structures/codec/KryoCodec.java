package io.asymnvm.structures.codec;

import com.esotericsoftware.kryo.Kryo;
import com.esotericsoftware.kryo.KryoException;
import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;
import com.esotericsoftware.kryo.util.DefaultInstantiatorStrategy;
import org.objenesis.strategy.StdInstantiatorStrategy;

import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;

/**
 * A Kryo codec for application classes. Registration is required and registration ids follow the order of the
 * classes given here, so the encoding does not depend on class names and is stable as long as the codec is built
 * with the same id, type and registration list (changing any of them calls for a new codec id). References are
 * off (values are trees), so the encoding of a value is deterministic. One Kryo per thread.
 *
 * <p>As a key codec it orders keys by their encoded bytes: a stable total order, consistent with byte
 * equality, but with no meaning in terms of the objects; prefer the built-in codecs for B+tree keys whose order
 * matters.
 *
 * @param <T> the encoded type
 */
public final class KryoCodec<T> implements KeyCodec<T> {
    private final int id;
    private final Class<T> type;
    private final List<Class<?>> registrations;
    private final ThreadLocal<Kryo> kryo;

    /**
     * @param id            stable id, at least {@link Codecs#FIRST_APPLICATION_ID}
     * @param type          the class of encoded values (registered first)
     * @param registrations further classes reachable from {@code type}, registered in this order
     */
    public KryoCodec(int id, Class<T> type, Class<?>... registrations) {
        if (id < Codecs.FIRST_APPLICATION_ID) {
            throw new IllegalArgumentException("application codec id " + id + " below "
                    + Codecs.FIRST_APPLICATION_ID + " (1.." + (Codecs.FIRST_APPLICATION_ID - 1)
                    + " are reserved for built-ins)");
        }
        this.id = id;
        this.type = Objects.requireNonNull(type, "type");
        this.registrations = List.copyOf(Arrays.asList(registrations));
        this.kryo = ThreadLocal.withInitial(this::newKryo);
        Codecs.register(this);
    }

    private Kryo newKryo() {
        Kryo k = new Kryo();
        k.setRegistrationRequired(true);
        k.setReferences(false);
        k.setInstantiatorStrategy(new DefaultInstantiatorStrategy(new StdInstantiatorStrategy()));
        k.register(type);
        for (Class<?> c : registrations) {
            k.register(c);
        }
        return k;
    }

    @Override
    public int id() {
        return id;
    }

    @Override
    public String name() {
        return "kryo:" + type.getSimpleName() + "#" + id;
    }

    @Override
    public byte[] encode(T value) {
        Objects.requireNonNull(value, "value");
        Output out = new Output(64, -1);
        try {
            kryo.get().writeObject(out, value);
        } catch (KryoException e) {
            throw new IllegalArgumentException("codec " + name() + " cannot encode a " + value.getClass().getName()
                    + ": " + e.getMessage(), e);
        }
        return out.toBytes();
    }

    @Override
    public T decode(byte[] bytes, int offset, int length) {
        Input in = new Input(bytes, offset, length);
        T value;
        try {
            value = kryo.get().readObject(in, type);
        } catch (KryoException | IndexOutOfBoundsException | IllegalArgumentException e) {
            throw new CodecException("codec " + name() + " cannot decode " + length + " bytes: " + e.getMessage(),
                    e);
        }
        if (in.position() != offset + length) {
            throw new CodecException("codec " + name() + " decoded " + (in.position() - offset) + " of " + length
                    + " bytes: not an encoding of " + type.getName());
        }
        return value;
    }

    @Override
    public Comparator<T> comparator() {
        return (a, b) -> Arrays.compareUnsigned(encode(a), encode(b));
    }
}
