package io.gossgpu.cli;

import io.gossgpu.model.safetensors.SafetensorsWriter;
import io.gossgpu.testmodel.TestModelGenerator;
import io.gossgpu.testmodel.TestModelPresets;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The built-in demo: when no model is given or found, a small random-weight model of the gpt-oss
 * architecture (with the real vocabulary) is written once to ~/.cache/goss-gpu and used instead. It
 * shows the machinery working; its words are random.
 */
final class DemoModel {
    static final long SEED = 20250805L;

    private DemoModel() {}

    static Path location() {
        String xdg = System.getenv("XDG_CACHE_HOME");
        Path cache = xdg != null && !xdg.isBlank() ? Path.of(xdg) : Path.of(System.getProperty("user.home"), ".cache");
        return cache.resolve("goss-gpu").resolve("demo-model-v1");
    }

    /** The demo model's folder, writing it first if it is not there yet. */
    static Path ensure() {
        Path dir = location();
        if (!Files.isRegularFile(dir.resolve("model.safetensors"))) {
            System.err.println("goss-gpu: writing the random-weight demo model to " + dir + " ...");
            SafetensorsWriter.writeOriginal(new TestModelGenerator(TestModelPresets.demo(), SEED), dir);
        }
        return dir;
    }

    /** The model to use: the one asked for, else a default location, else the demo (announced on stderr). */
    static Path resolve(Path explicit) {
        if (explicit != null) return ModelLocator.require(explicit);
        var found = ModelLocator.findDefault();
        if (found.isPresent()) return found.get();
        Path demo = ensure();
        System.err.println("goss-gpu: no model given or found (pass --model PATH or set GOSS_MODEL); using the built-in DEMO model: "
                + "random weights, so its replies are gibberish. It shows the engine working, not a trained model.");
        return demo;
    }
}
