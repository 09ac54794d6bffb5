package io.gossgpu.cli;

import java.nio.file.Path;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/** Tests that run commands on the tiny test model, made once per class by {@code make-test-model}. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class TinyModelTest {
    Path model;

    @BeforeAll
    void makeModel(@TempDir Path dir) {
        model = CommandLineTest.tinyModel(dir);
    }
}
