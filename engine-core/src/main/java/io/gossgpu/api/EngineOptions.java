package io.gossgpu.api;

import java.nio.file.Path;

/**
 * How to open an {@link Engine}.
 *
 * @param model   a model folder (original/ or Hugging Face layout) or a .gguf file
 * @param backend {@code auto} (best available), {@code reference}, {@code cpu}, {@code opencl}, {@code cuda} or {@code metal}
 * @param mmap    map the model files (default) or read them fully into memory
 */
public record EngineOptions(Path model, String backend, boolean mmap) {
    public static EngineOptions of(Path model) {
        return new EngineOptions(model, "auto", true);
    }

    public EngineOptions withBackend(String name) {
        return new EngineOptions(model, name, mmap);
    }

    public EngineOptions withMmap(boolean on) {
        return new EngineOptions(model, backend, on);
    }
}
