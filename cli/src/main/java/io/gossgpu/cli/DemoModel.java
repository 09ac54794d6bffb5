package io.gossgpu.cli;

import io.gossgpu.tools.TestModel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.Consumer;

/**
 * The built-in demo: when no model is given or found, the small model trained by scripts/train-demo (the exact
 * gpt-oss architecture and vocabulary, a few million parameters; not gpt-oss) is unpacked once from the jar to
 * ~/.cache/goss-gpu and used instead. It answers a few kinds of simple questions and calls two tools.
 */
final class DemoModel {
    private DemoModel() {}

    /** ~/.cache/goss-gpu (or $XDG_CACHE_HOME/goss-gpu): where generated models are kept. */
    static Path cacheDir() {
        String xdg = System.getenv("XDG_CACHE_HOME");
        Path cache = xdg != null && !xdg.isBlank() ? Path.of(xdg) : Path.of(System.getProperty("user.home"), ".cache");
        return cache.resolve("goss-gpu");
    }

    /** The demo model's folder, unpacking it first if it is not there yet. */
    static Path ensure() {
        return ensure(DemoModel::toStderr);
    }

    private static Path ensure(Consumer<String> notice) {
        Path cache = cacheDir();
        if (!io.gossgpu.api.DemoModel.isUnpacked(cache))
            notice.accept("unpacking the demo model to " + io.gossgpu.api.DemoModel.folder(cache) + " ...");
        return io.gossgpu.api.DemoModel.unpack(cache);
    }

    private static void toStderr(String notice) {
        System.err.println("goss-gpu: " + notice);
    }

    /** A generated random-weight model in {@code dir} (original layout), written first if it is not there yet. */
    static Path generated(Path dir, TestModel model, String what) {
        if (!Files.isRegularFile(dir.resolve("model.safetensors"))) {
            System.err.println("goss-gpu: writing " + what + " to " + dir + " ...");
            model.writeOriginal(dir);
        }
        return dir;
    }

    /** The model to use: the one asked for, else a default location, else the demo (announced on stderr). */
    static Path resolve(Path explicit) {
        return resolve(explicit, DemoModel::toStderr);
    }

    /** {@link #resolve(Path)}, with the demo's notices given to {@code notice} (the server logs them in its log format). */
    static Path resolve(Path explicit, Consumer<String> notice) {
        if (explicit != null) return ModelLocator.require(explicit);
        var found = ModelLocator.findDefault();
        if (found.isPresent()) return found.get();
        Path demo = ensure(notice);
        notice.accept("no model given or found (pass --model PATH or set GOSS_MODEL); using the built-in DEMO model: "
                + "a tiny model trained by this project, not gpt-oss. It answers simple sums, unit conversions, word games, capitals "
                + "and element symbols, and calls get_weather/add tools; anything else it answers badly.");
        return demo;
    }

    /** Whether {@code model} is the demo model's folder (wherever it was unpacked). */
    static boolean isDemo(Path model) {
        Path p = model.toAbsolutePath().normalize();
        return p.getParent() != null
                && io.gossgpu.api.DemoModel.folder(p.getParent()).equals(p);
    }
}
