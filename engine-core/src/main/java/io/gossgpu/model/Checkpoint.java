package io.gossgpu.model;

import java.lang.foreign.Arena;
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
    private final Conversions conversions;
    private final MappedFiles mapped;

    /**
     * @param tensors  in file order; the map is kept as given
     * @param metadata key/value metadata the file carries (GGUF's; config.json keys for safetensors), in file order
     * @param arena    owner of every tensor's bytes, closed by {@link #close()}
     */
    public Checkpoint(
            Path path,
            ModelFormat format,
            ModelConfig config,
            Map<String, TensorData> tensors,
            Map<String, Object> metadata,
            Arena arena) {
        this(path, format, config, tensors, metadata, arena, LoadOptions.defaults());
    }

    /** @param options how tensors the backends cannot run are converted ({@link #conversions()}) */
    public Checkpoint(
            Path path,
            ModelFormat format,
            ModelConfig config,
            Map<String, TensorData> tensors,
            Map<String, Object> metadata,
            Arena arena,
            LoadOptions options) {
        this.path = path;
        this.format = format;
        this.config = config;
        this.tensors = Collections.unmodifiableMap(tensors);
        this.metadata = Collections.unmodifiableMap(metadata);
        this.arena = arena;
        this.conversions = new Conversions(arena, options, tensors.values(), format == ModelFormat.HF);
        this.mapped = MappedFiles.of(tensors.values());
    }

    /**
     * Opens a model: a {@code .gguf} file (split or not), an OpenAI {@code original/} folder (config.json +
     * model.safetensors), a Hugging Face folder (config.json + model*.safetensors), or a folder that holds one
     * of these as the usual downloads lay them out ({@link ModelLocation}). A Hugging Face download that holds
     * both layouts is read in its transformers layout.
     */
    public static Checkpoint open(Path path, LoadOptions options) {
        ModelLocation at = ModelLocation.find(path);
        Checkpoint ckpt = CheckpointReaders.of(at.format()).open(at, options);
        if (options.checkTensors()) {
            try {
                TensorCheck.run(ckpt, options.progress());
            } catch (RuntimeException | Error e) {
                ckpt.close();
                throw e;
            }
        }
        return ckpt;
    }

    /** Which layout {@code path} holds, from file names and magic alone. */
    public static ModelFormat detect(Path path) {
        return ModelLocation.find(path).format();
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

    /** Load-time conversions of this checkpoint's tensors into types every backend runs; their memory is this checkpoint's. */
    public Conversions conversions() {
        return conversions;
    }

    /** The tensor called {@code name}, or a {@link ModelFormatException} saying it is missing. */
    public TensorData tensor(String name) {
        TensorData t = tensors.get(name);
        if (t == null) throw new ModelFormatException(path, name, "missing from the model");
        return t;
    }

    /** The files this checkpoint maps, as they were at load: {@link MappedFiles#checkUnchanged()} says whether they still are. */
    public MappedFiles mappedFiles() {
        return mapped;
    }

    @Override
    public void close() {
        arena.close();
    }
}
