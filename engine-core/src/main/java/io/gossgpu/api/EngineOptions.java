package io.gossgpu.api;

import io.gossgpu.GossException;
import io.gossgpu.backend.BackendOptions;
import io.gossgpu.backend.ExpertPlacement;
import io.gossgpu.backend.KvType;
import io.gossgpu.model.LoadOptions;
import java.nio.file.Path;

/**
 * How to open an {@link Engine}.
 *
 * @param model    a model folder (original/ or Hugging Face layout) or a .gguf file
 * @param backend  {@code auto} (best available), {@code reference}, {@code cpu}, {@code opencl}, {@code cuda} or {@code metal}
 * @param mmap     map the model files (default) or read them fully into memory
 * @param progress told how reading the files goes (only when not mapping) and how far checkTensors has come
 * @param checkTensors scan every weight for NaN, infinity and invalid MXFP4 scales before using it (slow: reads
 *                 the whole model once)
 * @param floatExperts keep float MoE experts (BF16 fine-tunes) as floats instead of quantizing them to MXFP4 at load
 * @param backendOptions the backend's launch knobs and settings ({@link BackendOptions}); {@link #of} takes them
 *                 from the environment and system properties once, {@link #withBackendOptions} replaces them
 * @param prefillChunk the most tokens of a prompt that one step runs beside the decode tokens of the engine's other
 *                 chats (continuous batching, see {@link Engine}); a prompt with nothing beside it runs whole
 * @param placement where a GPU backend runs the MoE experts of each layer ({@link ExpertPlacement}): {@code auto}
 *                 (default: on the GPU unless it cannot hold them, then the first layers' on the CPU), all on the CPU
 *                 ({@code --cpu-moe}) or the first N layers' ({@code --n-cpu-moe N}); nothing changes on cpu or reference
 * @param contextLength the longest context (tokens) the caller means to give its chats; {@link Engine#open} refuses
 *                 one beyond the model's maximum ({@link ModelInfo#maxContextLength()}) before loading the weights.
 *                 0 (the default) states none, and nothing is checked
 * @param kvType  how the KV caches of this engine's chats store keys and values ({@link KvType}, {@code --kv-type};
 *                 default {@link KvType#DEFAULT}, F16; F32 is the exact path)
 */
public record EngineOptions(
        Path model,
        String backend,
        boolean mmap,
        LoadProgress progress,
        boolean checkTensors,
        boolean floatExperts,
        BackendOptions backendOptions,
        int prefillChunk,
        ExpertPlacement placement,
        int contextLength,
        KvType kvType) {
    /** The default {@link #prefillChunk} ({@link io.gossgpu.generate.StepScheduler#DEFAULT_PREFILL_CHUNK}). */
    public static final int DEFAULT_PREFILL_CHUNK = io.gossgpu.generate.StepScheduler.DEFAULT_PREFILL_CHUNK;

    public EngineOptions {
        if (backendOptions == null) throw new NullPointerException("backendOptions");
        if (prefillChunk <= 0)
            throw new IllegalArgumentException("prefill chunk must be positive, got " + prefillChunk);
        if (placement == null) throw new NullPointerException("placement");
        if (contextLength < 0)
            throw new IllegalArgumentException("context length must be >= 0 (0 states none), got " + contextLength);
        if (kvType == null) throw new NullPointerException("kvType");
    }

    /** {@link #of}{@code (model)} on {@code backend}, mapped or not. */
    public EngineOptions(Path model, String backend, boolean mmap) {
        this(
                model,
                backend,
                mmap,
                LoadProgress.NONE,
                false,
                false,
                BackendOptions.fromEnvironment(),
                DEFAULT_PREFILL_CHUNK,
                ExpertPlacement.auto(),
                0,
                KvType.DEFAULT);
    }

    /** The model on the {@code auto} backend, mapped, with the backend settings of this process's environment. */
    public static EngineOptions of(Path model) {
        return new EngineOptions(model, "auto", true);
    }

    public EngineOptions withBackend(String name) {
        return new EngineOptions(
                model,
                name,
                mmap,
                progress,
                checkTensors,
                floatExperts,
                backendOptions,
                prefillChunk,
                placement,
                contextLength,
                kvType);
    }

    public EngineOptions withMmap(boolean on) {
        return new EngineOptions(
                model,
                backend,
                on,
                progress,
                checkTensors,
                floatExperts,
                backendOptions,
                prefillChunk,
                placement,
                contextLength,
                kvType);
    }

    public EngineOptions withProgress(LoadProgress p) {
        return new EngineOptions(
                model,
                backend,
                mmap,
                p,
                checkTensors,
                floatExperts,
                backendOptions,
                prefillChunk,
                placement,
                contextLength,
                kvType);
    }

    public EngineOptions withCheckTensors(boolean on) {
        return new EngineOptions(
                model,
                backend,
                mmap,
                progress,
                on,
                floatExperts,
                backendOptions,
                prefillChunk,
                placement,
                contextLength,
                kvType);
    }

    public EngineOptions withFloatExperts(boolean on) {
        return new EngineOptions(
                model,
                backend,
                mmap,
                progress,
                checkTensors,
                on,
                backendOptions,
                prefillChunk,
                placement,
                contextLength,
                kvType);
    }

    /** These options with the backend created with {@code o} (and nothing from the environment). */
    public EngineOptions withBackendOptions(BackendOptions o) {
        return new EngineOptions(
                model,
                backend,
                mmap,
                progress,
                checkTensors,
                floatExperts,
                o,
                prefillChunk,
                placement,
                contextLength,
                kvType);
    }

    /** These options with prompts run {@code n} tokens per step beside other chats' decoding ({@link #prefillChunk}). */
    public EngineOptions withPrefillChunk(int n) {
        return new EngineOptions(
                model,
                backend,
                mmap,
                progress,
                checkTensors,
                floatExperts,
                backendOptions,
                n,
                placement,
                contextLength,
                kvType);
    }

    LoadOptions loadOptions() {
        LoadProgress p = progress;
        LoadOptions.Progress toLoader = p == LoadProgress.NONE
                ? LoadOptions.Progress.NONE
                : new LoadOptions.Progress() {
                    @Override
                    public void read(Path file, long done, long total) {
                        p.read(file, done, total);
                    }

                    @Override
                    public void converted(long done, long total) {
                        p.converted(done, total);
                    }
                };
        return new LoadOptions(mmap, toLoader, checkTensors).withFloatExperts(floatExperts);
    }

    /** These options with the MoE experts placed as {@code p} says (GPU backends only). */
    public EngineOptions withPlacement(ExpertPlacement p) {
        return new EngineOptions(
                model,
                backend,
                mmap,
                progress,
                checkTensors,
                floatExperts,
                backendOptions,
                prefillChunk,
                p,
                contextLength,
                kvType);
    }

    /** These options stating that chats will hold up to {@code n} tokens ({@link #contextLength}), checked at open. */
    public EngineOptions withContextLength(int n) {
        if (n <= 0) throw new GossException("context length must be positive, got " + n);
        return new EngineOptions(
                model,
                backend,
                mmap,
                progress,
                checkTensors,
                floatExperts,
                backendOptions,
                prefillChunk,
                placement,
                n,
                kvType);
    }

    /** These options with KV caches that store keys and values as {@code t} ({@code --kv-type}). */
    public EngineOptions withKvType(KvType t) {
        return new EngineOptions(
                model,
                backend,
                mmap,
                progress,
                checkTensors,
                floatExperts,
                backendOptions,
                prefillChunk,
                placement,
                contextLength,
                t);
    }
}
