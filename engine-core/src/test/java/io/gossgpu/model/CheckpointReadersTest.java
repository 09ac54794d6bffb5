package io.gossgpu.model;

import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** Every layout has its reader registered (META-INF/services), which Checkpoint.open finds without naming it. */
class CheckpointReadersTest {
    @Test
    void everyFormatHasAReader() {
        for (ModelFormat f : ModelFormat.values()) {
            CheckpointReader r = CheckpointReaders.of(f);
            assertTrue(r.formats().contains(f), f + ": " + r.getClass().getName());
            assertTrue(
                    !r.getClass().getPackageName().equals(CheckpointReader.class.getPackageName()),
                    "a format package reads " + f);
        }
    }
}
