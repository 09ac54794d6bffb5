package io.gossgpu.api;

import io.gossgpu.model.LoadOptions;

import java.nio.file.Path;

/**
 * How to open an {@link Engine}.
 *
 * @param model    a model folder (original/ or Hugging Face layout) or a .gguf file
 * @param backend  {@code auto} (best available), {@code reference}, {@code cpu}, {@code opencl}, {@code cuda} or {@code metal}
 * @param mmap     map the model files (default) or read them fully into memory
 * @param progress told how reading the files goes (only when not mapping)
 */
public record EngineOptions(Path model, String backend, boolean mmap, LoadOptions.Progress progress) {
    public EngineOptions(Path model, String backend, boolean mmap) {
        this(model, backend, mmap, LoadOptions.Progress.NONE);
    }

    public static EngineOptions of(Path model) {
        return new EngineOptions(model, "auto", true);
    }

    public EngineOptions withBackend(String name) {
        return new EngineOptions(model, name, mmap, progress);
    }

    public EngineOptions withMmap(boolean on) {
        return new EngineOptions(model, backend, on, progress);
    }

    public EngineOptions withProgress(LoadOptions.Progress p) {
        return new EngineOptions(model, backend, mmap, p);
    }

    LoadOptions loadOptions() {
        return new LoadOptions(mmap, progress);
    }
}
