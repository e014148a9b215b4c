package io.asymnvm.frontend;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;

class SmokeTest {
    @TempDir
    Path dir;

    @Test
    void shouldPersistAcrossReopen() {
        try (AsymNvm nvm = AsymNvm.embedded(dir)) {
            Cells cells = nvm.transactional(Cells.class, new Cells.Impl());
            cells.create(100);
            for (int i = 0; i < 1000; i++) {
                cells.add(i % 100, (i + 7) % 100, 3);
                cells.set(i % 100, i);
            }
            assertEquals(999, cells.get(99 - 99 + 999 % 100 == 99 ? 99 : 99));
            System.out.println(nvm.stats() + " " + nvm.counters());
        }
        try (AsymNvm nvm = AsymNvm.embedded(dir)) {
            Cells cells = nvm.transactional(Cells.class, new Cells.Impl());
            assertEquals(100, cells.count());
            assertEquals(999, cells.get(99));
            System.out.println(nvm.stats() + " " + nvm.counters());
        }
    }
}
