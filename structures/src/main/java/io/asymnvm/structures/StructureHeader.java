package io.asymnvm.structures;

import io.asymnvm.frontend.Transaction;
import io.asymnvm.structures.codec.Codecs;
import io.asymnvm.structures.codec.ValueCodec;
import io.asymnvm.structures.layout.StructureHeaderLayout;

import java.util.Objects;

/**
 * What the self-describing header of a structure's root block says ({@link StructureHeaderLayout}): type, codec
 * ids and name. A catalog reads it to verify an entry or to rebuild itself from the PM image.
 */
public record StructureHeader(StructureType type, int keyCodecId, int valueCodecId, String name) {

    public StructureHeader {
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(name, "name");
    }

    /** Reads the header at {@code rootAddress}; an {@link IllegalArgumentException} if none is there. */
    public static StructureHeader read(Transaction tx, long rootAddress) {
        return decode(tx.read(rootAddress, StructureHeaderLayout.HEADER_LENGTH), rootAddress);
    }

    static StructureHeader decode(byte[] block, long rootAddress) {
        StructureHeaderLayout.checkHeader(block, rootAddress);
        return new StructureHeader(StructureType.fromId(StructureHeaderLayout.type(block)),
                StructureHeaderLayout.keyCodecId(block), StructureHeaderLayout.valueCodecId(block),
                StructureHeaderLayout.name(block));
    }

    /**
     * Checks that the root block image at {@code rootAddress} holds a structure of {@code type} written with these
     * codecs; otherwise an {@link IllegalArgumentException} naming what is stored and what was asked for.
     */
    static void check(byte[] block, long rootAddress, StructureType type, ValueCodec<?> keyCodec,
                      ValueCodec<?> valueCodec) {
        StructureHeaderLayout.checkHeader(block, rootAddress);
        int t = StructureHeaderLayout.type(block);
        int k = StructureHeaderLayout.keyCodecId(block);
        int v = StructureHeaderLayout.valueCodecId(block);
        if (t != type.id() || k != keyCodec.id() || v != valueCodec.id()) {
            StructureHeader stored = decode(block, rootAddress);
            throw new IllegalArgumentException("structure \"" + stored.name() + "\" at address " + rootAddress
                    + " is a " + stored.type().displayName() + " with key codec " + codecName(k)
                    + " and value codec " + codecName(v) + "; opened as a " + type.displayName()
                    + " with key codec " + keyCodec.name() + "(" + keyCodec.id() + ") and value codec "
                    + valueCodec.name() + "(" + valueCodec.id() + ")");
        }
    }

    private static String codecName(int id) {
        try {
            return Codecs.builtin(id).name() + "(" + id + ")";
        } catch (IllegalArgumentException e) {
            return "#" + id;
        }
    }

    /** Allocates and writes the root block of a new structure; returns its address. */
    static long create(Transaction tx, StructureType type, String name, ValueCodec<?> keyCodec,
                       ValueCodec<?> valueCodec) {
        byte[] utf8 = StructureHeaderLayout.checkName(name);
        Objects.requireNonNull(keyCodec, "keyCodec");
        Objects.requireNonNull(valueCodec, "valueCodec");
        byte[] image = new byte[StructureHeaderLayout.ROOT_BLOCK_LENGTH];
        StructureHeaderLayout.encode(image, type.id(), keyCodec.id(), valueCodec.id(), utf8);
        long root = tx.allocate(StructureHeaderLayout.ROOT_BLOCK_LENGTH);
        tx.write(root, image);
        return root;
    }
}
