package io.gossgpu.backend;

import io.gossgpu.GossException;
import io.gossgpu.model.ModelConfig;

/**
 * What the user asked for: where the MoE experts of each layer should run when the backend is a GPU. {@link #auto}
 * (the default) splits only when the GPU cannot hold the whole model: as many layers' experts on the GPU as its free
 * memory allows after the rest of the model, a KV cache of {@code kvTokens} tokens and scratch; the first layers' go
 * to the CPU. {@link #allOnCpu} is {@code --cpu-moe}, {@link #firstOnCpu} {@code --n-cpu-moe N}. On the cpu and
 * reference backends everything is on the CPU already and the request changes nothing.
 *
 * @param mode      how the plan is made
 * @param cpuLayers with {@link Mode#FIRST_N}: how many of the first layers' experts run on the CPU
 * @param kvTokens  with {@link Mode#AUTO}: the KV cache positions (all sessions together) the plan leaves room for
 * @param streamMinTokens a step of at least this many tokens (a long prompt's prefill chunk) runs the MoE of a CPU
 *                  layer on the GPU, streaming that layer's experts into one GPU scratch weight set sized for one layer,
 *                  instead of on the CPU ({@code --stream-experts-min-t N}); 0 (the default) never streams. Off by
 *                  default until a GPU measures which is faster ({@code run-split-bench.sh}).
 * @param kvType    how that KV cache stores its numbers (its bytes per position); {@link io.gossgpu.api.Engine#open}
 *                  sets it from {@link io.gossgpu.api.EngineOptions#kvType()}
 */
public record ExpertPlacement(Mode mode, int cpuLayers, int kvTokens, int streamMinTokens, KvType kvType) {
    /** The KV cache {@link #auto()} leaves room for: the CLI's default context. */
    public static final int DEFAULT_KV_TOKENS = 4096;

    public enum Mode {
        /** Split only when the GPU cannot hold the model, as little as fits. */
        AUTO,
        /** Every layer's experts on the CPU ({@code --cpu-moe}). */
        ALL_ON_CPU,
        /** The experts of the first {@code cpuLayers} layers on the CPU ({@code --n-cpu-moe N}; 0 keeps all on the GPU). */
        FIRST_N
    }

    public ExpertPlacement {
        if (mode == null) throw new NullPointerException("mode");
        if (cpuLayers < 0) throw new GossException("--n-cpu-moe must be 0 or more, got " + cpuLayers);
        if (kvTokens <= 0)
            throw new GossException("the KV cache to plan for must be positive, got " + kvTokens + " tokens");
        if (streamMinTokens < 0)
            throw new GossException("--stream-experts-min-t must be 0 (off) or more, got " + streamMinTokens);
        if (kvType == null) throw new NullPointerException("kvType");
    }

    public ExpertPlacement(Mode mode, int cpuLayers, int kvTokens) {
        this(mode, cpuLayers, kvTokens, 0, KvType.F32);
    }

    /** The bytes of the KV cache this request leaves room for. */
    public long kvBytes(ModelConfig c) {
        return new KvCacheSpec(c, kvTokens, 0, kvType).bytes();
    }

    /** This request for a KV cache stored as {@code t}. */
    public ExpertPlacement withKvType(KvType t) {
        return new ExpertPlacement(mode, cpuLayers, kvTokens, streamMinTokens, t);
    }

    /** Whether a step of {@code tokens} tokens streams a CPU layer's experts to the GPU. */
    public boolean streams(int tokens) {
        return streamMinTokens > 0 && tokens >= streamMinTokens;
    }

    /** This request, streaming the experts of CPU layers to the GPU for steps of at least {@code tokens} tokens (0: never). */
    public ExpertPlacement withStreamMinTokens(int tokens) {
        return new ExpertPlacement(mode, cpuLayers, kvTokens, tokens, kvType);
    }

    public static ExpertPlacement auto() {
        return auto(DEFAULT_KV_TOKENS);
    }

    /** {@code auto}, leaving room for a KV cache of {@code kvTokens} positions (the context length times the sessions). */
    public static ExpertPlacement auto(int kvTokens) {
        return new ExpertPlacement(Mode.AUTO, 0, kvTokens);
    }

    public static ExpertPlacement allOnCpu() {
        return new ExpertPlacement(Mode.ALL_ON_CPU, 0, DEFAULT_KV_TOKENS);
    }

    public static ExpertPlacement firstOnCpu(int n) {
        return new ExpertPlacement(Mode.FIRST_N, n, DEFAULT_KV_TOKENS);
    }

    /**
     * The request the command-line flags make: {@code --cpu-moe} (all), {@code --n-cpu-moe N} (may be null), or neither
     * ({@code auto} for {@code kvTokens}). Both at once is an error.
     */
    public static ExpertPlacement fromFlags(boolean cpuMoe, Integer nCpuMoe, int kvTokens) {
        if (cpuMoe && nCpuMoe != null) throw new GossException("give --cpu-moe or --n-cpu-moe, not both");
        if (cpuMoe) return allOnCpu();
        if (nCpuMoe != null) return firstOnCpu(nCpuMoe);
        return auto(kvTokens);
    }

    /** This request for a KV cache of {@code tokens} positions (only {@code auto} uses it). */
    public ExpertPlacement withKvTokens(int tokens) {
        return new ExpertPlacement(mode, cpuLayers, tokens, streamMinTokens, kvType);
    }

    /** "auto", "--cpu-moe", "--n-cpu-moe 12", with " --stream-experts-min-t N" when streaming is on. */
    public String describe() {
        String m = switch (mode) {
            case AUTO -> "auto";
            case ALL_ON_CPU -> "--cpu-moe";
            case FIRST_N -> "--n-cpu-moe " + cpuLayers;
        };
        return streamMinTokens > 0 ? m + " --stream-experts-min-t " + streamMinTokens : m;
    }

    /** Fails with a clear message when {@code --n-cpu-moe} names more layers than {@code layers}, on every backend. */
    public void checkLayers(int layers) {
        if (mode == Mode.FIRST_N && (cpuLayers < 0 || cpuLayers > layers))
            throw new io.gossgpu.GossException(
                    "--n-cpu-moe must be between 0 and the model's " + layers + " layers, got " + cpuLayers);
    }
}
