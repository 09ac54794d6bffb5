package io.gossgpu.model.gguf;

import io.gossgpu.model.ModelConfig;
import io.gossgpu.model.ModelFormatException;
import io.gossgpu.model.TensorData;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * Builds a {@link ModelConfig} from the metadata llama.cpp's converter writes for architecture
 * {@code gpt-oss} (LLM_ARCH_OPENAI_MOE). The SwiGLU clamp limit is not in GGUF metadata (llama.cpp
 * hard-codes 7.0); YaRN's beta_slow/beta_fast (OpenAI's ntk alpha/beta) default to 1 and 32.
 */
public final class GgufConfig {
    public static final String ARCH = "gpt-oss";
    public static final String ARCH_KEY = "general.architecture";
    /** The architecture name Ollama's first converter wrote (with its own tensor names and MXFP4 layout), and its key prefix. */
    public static final String OLLAMA_ARCH = "gptoss";

    /** Metadata keys, relative to the architecture prefix {@code gpt-oss.}. */
    public static final String BLOCK_COUNT = "block_count",
            CONTEXT_LENGTH = "context_length",
            EMBEDDING_LENGTH = "embedding_length",
            FEED_FORWARD_LENGTH = "feed_forward_length",
            EXPERT_FEED_FORWARD_LENGTH = "expert_feed_forward_length",
            HEAD_COUNT = "attention.head_count",
            HEAD_COUNT_KV = "attention.head_count_kv",
            KEY_LENGTH = "attention.key_length",
            VALUE_LENGTH = "attention.value_length",
            RMS_EPS = "attention.layer_norm_rms_epsilon",
            SLIDING_WINDOW = "attention.sliding_window",
            EXPERT_COUNT = "expert_count",
            EXPERT_USED_COUNT = "expert_used_count",
            ROPE_FREQ_BASE = "rope.freq_base",
            ROPE_SCALING_TYPE = "rope.scaling.type",
            ROPE_SCALING_FACTOR = "rope.scaling.factor",
            ROPE_SCALING_ORIG_CTX = "rope.scaling.original_context_length",
            YARN_BETA_FAST = "rope.scaling.yarn_beta_fast",
            YARN_BETA_SLOW = "rope.scaling.yarn_beta_slow";

    public static final float SWIGLU_LIMIT = 7.0f;
    public static final float DEFAULT_NTK_ALPHA = 1f, DEFAULT_NTK_BETA = 32f;

    private final Map<String, Object> meta;
    private final Path file;
    /** The architecture whose keys are read: {@link #ARCH} or {@link #OLLAMA_ARCH}. */
    private String arch = ARCH;

    private GgufConfig(Map<String, Object> meta, Path file) {
        this.meta = meta;
        this.file = file;
    }

    static ModelConfig from(Map<String, Object> meta, Map<String, TensorData> tensors, Path file) {
        return new GgufConfig(meta, file).build(tensors);
    }

    private ModelConfig build(Map<String, TensorData> tensors) {
        Object arch = meta.get(ARCH_KEY);
        if (arch == null) throw fail("missing required metadata key '" + ARCH_KEY + "'");
        if (OLLAMA_ARCH.equals(arch)) this.arch = OLLAMA_ARCH;
        else if (!ARCH.equals(arch))
            throw fail("architecture '" + arch + "' is not gpt-oss (" + ARCH_KEY + " must be \"" + ARCH + "\")");
        int layers = intKey(BLOCK_COUNT, null);
        // Each layer has 19 tensors: a count beyond the file's tensors is corrupt (and must not size allocations).
        if (layers > tensors.size())
            throw fail(k(BLOCK_COUNT) + " is " + layers + " but the file holds only " + tensors.size() + " tensors");
        int hidden = intKey(EMBEDDING_LENGTH, null);
        Integer ff = meta.containsKey(k(EXPERT_FEED_FORWARD_LENGTH)) ? null : intKey(FEED_FORWARD_LENGTH, null);
        int intermediate = ff != null ? ff : intKey(EXPERT_FEED_FORWARD_LENGTH, null);
        int heads = intKey(HEAD_COUNT, null);
        // llama.cpp defaults these to head_count and embedding_length / head_count, never right for gpt-oss (8 KV heads
        // of 64, not 64 of 45); both converters (llama.cpp's, Ollama's) write them, so a missing one is named, not
        // guessed.
        int kvHeads = intKey(HEAD_COUNT_KV, null);
        int headDim = intKey(KEY_LENGTH, null);
        int valueDim = intKey(VALUE_LENGTH, headDim);
        if (valueDim != headDim)
            throw fail(k(VALUE_LENGTH) + " " + valueDim + " differs from " + k(KEY_LENGTH) + " " + headDim);
        float eps = floatKey(RMS_EPS, null);
        int window = intKey(SLIDING_WINDOW, null);
        int experts = intKey(EXPERT_COUNT, null);
        int used = intKey(EXPERT_USED_COUNT, null);
        float theta = floatKey(ROPE_FREQ_BASE, null);
        Object scalingType = meta.get(k(ROPE_SCALING_TYPE));
        float factor;
        if (scalingType == null || "yarn".equals(scalingType)) factor = floatKey(ROPE_SCALING_FACTOR, 1f);
        else if ("none".equals(scalingType)) factor = 1f;
        else throw fail(k(ROPE_SCALING_TYPE) + " '" + scalingType + "' is not supported for gpt-oss (expected yarn)");
        int initialContext = meta.containsKey(k(ROPE_SCALING_ORIG_CTX))
                ? intKey(ROPE_SCALING_ORIG_CTX, null)
                : intKey(CONTEXT_LENGTH, null);
        float alpha = floatKey(YARN_BETA_SLOW, DEFAULT_NTK_ALPHA);
        float beta = floatKey(YARN_BETA_FAST, DEFAULT_NTK_BETA);
        int vocab = vocabSize(tensors);
        return new ModelConfig(
                        layers,
                        experts,
                        used,
                        vocab,
                        hidden,
                        intermediate,
                        SWIGLU_LIMIT,
                        headDim,
                        heads,
                        kvHeads,
                        window,
                        initialContext,
                        theta,
                        factor,
                        alpha,
                        beta,
                        eps)
                .validate(file.toString());
    }

    private int vocabSize(Map<String, TensorData> tensors) {
        TensorData embd = tensors.get("token_embd.weight");
        if (embd != null) {
            if (embd.rank() != 2)
                throw new ModelFormatException(file, embd.name(), "expected 2 dimensions, got " + embd.shapeString());
            if (embd.dim(0) > Integer.MAX_VALUE)
                throw new ModelFormatException(file, embd.name(), "too many rows: " + embd.shapeString());
            return (int) embd.dim(0);
        }
        if (meta.get("tokenizer.ggml.tokens") instanceof List<?> tokens) return tokens.size();
        throw new ModelFormatException(
                file,
                "token_embd.weight",
                "missing from the model (and no tokenizer.ggml.tokens to size the vocabulary)");
    }

    public static String key(String suffix) {
        return key(ARCH, suffix);
    }

    public static String key(String arch, String suffix) {
        return arch + "." + suffix;
    }

    private String k(String suffix) {
        return key(arch, suffix);
    }

    private int intKey(String suffix, Integer fallback) {
        String k = k(suffix);
        Object v = meta.get(k);
        if (v == null) {
            if (fallback == null) throw fail("missing required metadata key '" + k + "'");
            return fallback;
        }
        long n = switch (v) {
            case Byte b -> b;
            case Short s -> s;
            case Integer i -> i;
            case Long l -> l;
            default -> throw fail("metadata key '" + k + "' must be an integer, got " + describe(v));
        };
        if (n < 0 || n > Integer.MAX_VALUE) throw fail("metadata key '" + k + "' is out of range: " + n);
        return (int) n;
    }

    private float floatKey(String suffix, Float fallback) {
        String k = k(suffix);
        Object v = meta.get(k);
        if (v == null) {
            if (fallback == null) throw fail("missing required metadata key '" + k + "'");
            return fallback;
        }
        return switch (v) {
            case Float f -> f;
            case Double d -> d.floatValue();
            case Byte b -> b;
            case Short s -> s;
            case Integer i -> i;
            case Long l -> l;
            default -> throw fail("metadata key '" + k + "' must be a number, got " + describe(v));
        };
    }

    private static String describe(Object v) {
        return v instanceof List<?> l ? "an array of " + l.size() : v.getClass().getSimpleName() + " " + v;
    }

    private ModelFormatException fail(String message) {
        return new ModelFormatException(file, message);
    }
}
