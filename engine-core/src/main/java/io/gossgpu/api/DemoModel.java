package io.gossgpu.api;

import io.gossgpu.demo.DemoCheckpoint;
import java.nio.file.Path;

/**
 * The demo model in the engine's jar, for tests and first steps: a small model of the exact gpt-oss architecture
 * trained to answer a few kinds of questions in Harmony (arithmetic, capitals, a weather tool), not gpt-oss itself.
 * It runs on every backend in seconds:
 *
 * <pre>{@code
 * Path model = DemoModel.unpack(Path.of(System.getProperty("java.io.tmpdir"), "goss-gpu"));
 * try (Engine engine = Engine.open(EngineOptions.of(model))) { ... }
 * }</pre>
 */
public final class DemoModel {
    private DemoModel() {}

    /**
     * The demo model's folder under {@code parent}, written out from the jar the first time (1.9 MB in the jar, about
     * 100 MB unpacked; safe to race and to interrupt), then reused.
     */
    public static Path unpack(Path parent) {
        return DemoCheckpoint.unpack(parent);
    }

    /** Where {@link #unpack} puts the demo model under {@code parent} (whether or not it is there yet). */
    public static Path folder(Path parent) {
        return DemoCheckpoint.folder(parent);
    }

    /** Whether the demo model is already unpacked, complete, under {@code parent}. */
    public static boolean isUnpacked(Path parent) {
        return DemoCheckpoint.isUnpacked(parent);
    }
}
