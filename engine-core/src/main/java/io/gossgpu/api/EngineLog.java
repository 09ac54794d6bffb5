package io.gossgpu.api;

/**
 * Where the engine's own messages go: the {@code io.gossgpu.api} {@link System.Logger} (warnings about the JVM flags
 * and the model's vocabulary, the load-time quantization note, auto's fallback to the next backend), never straight
 * to {@code System.err}. An application routes them like any other JDK logging (java.util.logging by default, or its
 * own {@link System.LoggerFinder}); the command line prints them as {@code goss-gpu: ...} lines.
 */
final class EngineLog {
    static final System.Logger LOG = System.getLogger("io.gossgpu.api");

    private EngineLog() {}
}
