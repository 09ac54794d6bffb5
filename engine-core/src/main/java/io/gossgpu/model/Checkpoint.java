package io.gossgpu.model;

import io.gossgpu.GossException;
import io.gossgpu.model.gguf.GgufReader;
import io.gossgpu.model.safetensors.SafetensorsReader;

import java.lang.foreign.Arena;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.Map;

/**
 * A model file (or folder) opened and validated: its layout, config and named tensors whose bytes
 * are views of mapped (or fully loaded) native memory owned by this checkpoint's arena. Closing it
 * unmaps everything; views taken from it must not be used afterwards.
 */
public final class Checkpoint implements AutoCloseable {
    private final Path path;
    private final ModelFormat format;
    private final ModelConfig config;
    private final Map<String, TensorData> tensors;
    private final Map<String, Object> metadata;
    private final Arena arena;

    /**
     * @param tensors  in file order; the map is kept as given
     * @param metadata key/value metadata the file carries (GGUF's; config.json keys for safetensors), in file order
     * @param arena    owner of every tensor's bytes, closed by {@link #close()}
     */
    public Checkpoint(Path path, ModelFormat format, ModelConfig config, Map<String, TensorData> tensors,
                      Map<String, Object> metadata, Arena arena) {
        this.path = path;
        this.format = format;
        this.config = config;
        this.tensors = Collections.unmodifiableMap(tensors);
        this.metadata = Collections.unmodifiableMap(metadata);
        this.arena = arena;
    }

    /**
     * Opens a model: a {@code .gguf} file, an OpenAI {@code original/} folder (config.json +
     * model.safetensors), or a Hugging Face folder (config.json + model*.safetensors). A Hugging Face
     * download that holds both layouts is read in its transformers layout.
     */
    public static Checkpoint open(Path path, LoadOptions options) {
        if (!Files.exists(path)) throw new GossException("model not found: " + path);
        return switch (detect(path)) {
            case GGUF -> GgufReader.open(path, options);
            case ORIGINAL -> SafetensorsReader.openOriginal(path, options);
            case HF -> SafetensorsReader.openHf(path, options);
        };
    }

    /** Which layout {@code path} holds, from file names and magic alone. */
    public static ModelFormat detect(Path path) {
        if (Files.isRegularFile(path)) {
            if (GgufReader.hasMagic(path)) return ModelFormat.GGUF;
            throw new GossException(path + ": not a GGUF file (no GGUF magic) and not a model folder");
        }
        if (!Files.isDirectory(path)) throw new GossException("model not found: " + path);
        boolean hasConfig = Files.isRegularFile(path.resolve("config.json"));
        if (hasConfig && SafetensorsReader.isOriginalFolder(path)) return ModelFormat.ORIGINAL;
        if (hasConfig && (Files.isRegularFile(path.resolve("model.safetensors.index.json"))
                || SafetensorsReader.isHfConfig(path.resolve("config.json")))) return ModelFormat.HF;
        if (hasConfig && Files.isRegularFile(path.resolve("model.safetensors"))) return ModelFormat.ORIGINAL;
        if (Files.isDirectory(path.resolve("original"))) return detect(path.resolve("original"));
        throw new GossException(path + ": no model here (expected config.json with model*.safetensors, an original/ folder, or a .gguf file)");
    }

    public Path path() {
        return path;
    }

    public ModelFormat format() {
        return format;
    }

    public ModelConfig config() {
        return config;
    }

    /** All tensors by name, in file order. */
    public Map<String, TensorData> tensors() {
        return tensors;
    }

    /** Metadata from the file: GGUF key/values (arrays as Java lists), or config.json's top-level keys. */
    public Map<String, Object> metadata() {
        return metadata;
    }

    /** The tensor called {@code name}, or a {@link ModelFormatException} saying it is missing. */
    public TensorData tensor(String name) {
        TensorData t = tensors.get(name);
        if (t == null) throw new ModelFormatException(path, name, "missing from the model");
        return t;
    }

    @Override
    public void close() {
        arena.close();
    }
}
