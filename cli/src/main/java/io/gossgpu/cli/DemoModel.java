package io.gossgpu.cli;

import io.gossgpu.model.ModelConfig;
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
        return cacheDir().resolve("demo-model-v1");
    }

    /** ~/.cache/goss-gpu (or $XDG_CACHE_HOME/goss-gpu): where generated models are kept. */
    static Path cacheDir() {
        String xdg = System.getenv("XDG_CACHE_HOME");
        Path cache = xdg != null && !xdg.isBlank() ? Path.of(xdg) : Path.of(System.getProperty("user.home"), ".cache");
        return cache.resolve("goss-gpu");
    }

    /** The demo model's folder, writing it first if it is not there yet. */
    static Path ensure() {
        return generated(location(), TestModelPresets.demo(), SEED, "the random-weight demo model");
    }

    /** A generated random-weight model in {@code dir} (original layout), written first if it is not there yet. */
    static Path generated(Path dir, ModelConfig config, long seed, String what) {
        if (!Files.isRegularFile(dir.resolve("model.safetensors"))) {
            System.err.println("goss-gpu: writing " + what + " to " + dir + " ...");
            SafetensorsWriter.writeOriginal(new TestModelGenerator(config, seed), dir);
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
