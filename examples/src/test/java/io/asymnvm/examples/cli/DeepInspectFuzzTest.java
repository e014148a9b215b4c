package io.asymnvm.examples.cli;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.asymnvm.backend.BackendConfiguration;
import io.asymnvm.backend.BackendNode;
import io.asymnvm.backend.InspectTool;
import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.inspect.HeapInspector;
import io.asymnvm.core.layout.SuperblockLayout.Superblock;
import io.asymnvm.core.testing.FuzzSeeds;
import io.asymnvm.frontend.AsymNvm;
import io.asymnvm.frontend.FrontendOptions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Fuzzes {@code inspect --deep} ({@link InspectTool#deepInspect}: the allocator walk of every slab and every named
 * structure's verifier) over heap mutations of a small image holding a B+tree and a hash map (the
 * {@link DeepInspectTest} store, 2 MiB image, 256 KiB slabs), built once per test class.
 *
 * <p>Input: {@code flags(1)}, then mutations of 5 bytes: {@code offset(4, LE) value(1)}; the offset is taken modulo
 * the granted slabs (the heap in use), or modulo the whole file when flag bit 0 is set.
 *
 * <p>Contract: the walk returns findings (problems named) or refuses the file with a typed
 * {@link AsymNvmException}; the unchanged image has no problem; nothing else escapes (no exception, no loop past
 * the fuzzer's timeout, no allocation a damaged length asks for), and the file is never written.
 */
class DeepInspectFuzzTest {
    private static final int FLAG_WHOLE_FILE = 1;
    private static final int MUTATION = 5;
    private static final long SIZE = 2L << 20;

    private static Path dir;
    private static Path pm;
    private static byte[] image;
    private static long heapAt;
    private static long heapInUse;

    @BeforeAll
    static void buildImage() throws IOException {
        dir = FuzzSeeds.scratch("deep-fuzz");
        Path built = dir.resolve("built.pm");
        BackendConfiguration config = BackendConfiguration.builder(built).size(SIZE).pageSize(4096)
                .slabSize(256L << 10).maxFrontends(2).semRingCapacity(64L << 10).redoRingCapacity(64L << 10)
                .conclude();
        try (BackendNode node = BackendNode.start(config);
             AsymNvm nvm = AsymNvm.open(node.localFabric(), 1, FrontendOptions.defaults())) {
            DeepInspectTest.Store store = nvm.transactional(DeepInspectTest.Store.class,
                    new DeepInspectTest.StoreImpl(nvm));
            byte[] value = new byte[100];
            for (long k = 0; k < 90; k++) {
                Arrays.fill(value, (byte) k);
                store.put(k, value);
            }
            for (long k = 0; k < 90; k += 3) {
                store.remove(k);
            }
            Superblock sb = node.superblock();
            heapAt = sb.slabOffset(0);
            heapInUse = Math.max(1, nvm.stats().slabGrants()) * sb.slabSize();
        }
        image = Files.readAllBytes(built);
        pm = dir.resolve("fuzzed.pm");
        HeapInspector.Findings clean = InspectTool.deepInspect(built);
        assertTrue(clean.ok() && clean.structures() == 2, "the seed image is clean: " + clean);
    }

    @AfterAll
    static void removeImage() {
        FuzzSeeds.removeScratch(dir);
    }

    @FuzzTest(maxDuration = FuzzSeeds.MAX_DURATION)
    void fuzzDeepInspect(byte[] input) throws IOException {
        byte[] mutated = image.clone();
        boolean wholeFile = input.length > 0 && (input[0] & FLAG_WHOLE_FILE) != 0;
        ByteBuffer in = ByteBuffer.wrap(input).order(ByteOrder.LITTLE_ENDIAN);
        boolean changed = false;
        for (int at = 1; at + MUTATION <= input.length; at += MUTATION) {
            long raw = Integer.toUnsignedLong(in.getInt(at));
            int offset = (int) (wholeFile ? raw % mutated.length : heapAt + raw % heapInUse);
            changed |= mutated[offset] != in.get(at + 4);
            mutated[offset] = in.get(at + 4);
        }
        Files.write(pm, mutated);
        try {
            HeapInspector.Findings f = InspectTool.deepInspect(pm);
            assertNotNull(f.problems());
            assertTrue(changed || f.ok(), "problems in the unchanged image: " + f.problems());
        } catch (AsymNvmException e) {
            assertNotEquals(ErrorCode.UNKNOWN, e.errorCode(), e.getMessage());
            assertTrue(changed, "the unchanged image refused: " + e.getMessage());
        }
        assertArrayEquals(mutated, Files.readAllBytes(pm), "inspect --deep wrote the image");
    }

    /** Seeds: no change, and single changes at the start of the slabs in use (headers, roots, nodes). */
    static Map<String, byte[]> seeds() {
        Map<String, byte[]> s = new LinkedHashMap<>();
        s.put("unchanged", new byte[] {0});
        s.put("slab-header", input(0, 8, 0x21));
        s.put("first-blocks", input(0, 200, 0x7F));
        s.put("second-slab", input(0, (256 << 10) + 300, 0x01));
        s.put("superblock", input(FLAG_WHOLE_FILE, 40, 0x09));
        return s;
    }

    private static byte[] input(int flags, int offset, int value) {
        return ByteBuffer.allocate(1 + MUTATION).order(ByteOrder.LITTLE_ENDIAN).put((byte) flags).putInt(offset)
                .put((byte) value).array();
    }

    @Test
    void committedSeedsMatchTheirGenerator() {
        FuzzSeeds.check(getClass(), "fuzzDeepInspect", seeds());
    }
}
