package io.gossgpu.testmodel;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.gossgpu.GossException;
import io.gossgpu.model.DType;
import io.gossgpu.model.Json;
import io.gossgpu.model.ModelConfig;
import io.gossgpu.model.safetensors.ConfigJson;
import io.gossgpu.model.safetensors.SafetensorsFileWriter;
import io.gossgpu.model.safetensors.ShardIndex;
import io.gossgpu.quant.Bf16;
import io.gossgpu.quant.LE;
import io.gossgpu.quant.Mxfp4;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Writes generated gpt-oss checkpoints as safetensors, in OpenAI's original/ layout or the Hugging
 * Face transformers layout. Tensors go straight from the generator into the mapped output files, one
 * at a time; the only other memory is one temporary native buffer per split tensor (the fused QKV).
 */
public final class SafetensorsWriter {
    public static final Map<String, String> FILE_METADATA = Map.of("format", "pt");

    private SafetensorsWriter() {}

    /** The tiny model of {@code seed} in OpenAI's layout in {@code dir}/m, which is returned. */
    public static Path writeTinyOriginal(Path dir, long seed) {
        return writeOriginalIn(dir, TestModelPresets.tiny(), seed);
    }

    /** A model of {@code shape} and {@code seed} in OpenAI's layout in {@code dir}/m, which is returned. */
    public static Path writeOriginalIn(Path dir, ModelConfig shape, long seed) {
        Path folder = dir.resolve("m");
        writeOriginal(new TestModelGenerator(shape, seed), folder);
        return folder;
    }

    /** {@code dir}/config.json (OpenAI's keys) and {@code dir}/model.safetensors. */
    public static void writeOriginal(TestModelGenerator g, Path dir) {
        createDirectories(dir);
        writeJson(dir.resolve("config.json"), originalConfig(g.config()));
        List<SafetensorsFileWriter.Tensor> tensors = new ArrayList<>();
        for (TensorSpec t : g.originalTensors())
            tensors.add(new SafetensorsFileWriter.Tensor(t.name(), t.dtype(), t.shape(), seg -> g.fill(t, seg)));
        SafetensorsFileWriter.write(dir.resolve("model.safetensors"), tensors, FILE_METADATA);
    }

    /**
     * {@code dir}/config.json (Hugging Face's GptOssConfig), {@code model-0000i-of-0000n.safetensors}
     * shards of at most {@code maxShardBytes} of tensor data each (a larger single tensor gets a shard
     * of its own) and {@code model.safetensors.index.json}.
     */
    public static void writeHf(TestModelGenerator g, Path dir, long maxShardBytes) {
        writeHf(g, dir, maxShardBytes, false);
    }

    /**
     * {@link #writeHf(TestModelGenerator, Path, long)}, with {@code bf16Experts} as a BF16 fine-tune stores them (TRL and
     * Unsloth merges): {@code mlp.experts.gate_up_proj} {@code [E, H, 2I]} and {@code down_proj} {@code [E, I, H]}, the
     * experts' MXFP4 values exactly, transposed (input features first), and no {@code quantization_config}.
     */
    public static void writeHf(TestModelGenerator g, Path dir, long maxShardBytes, boolean bf16Experts) {
        if (maxShardBytes <= 0) throw new GossException("max shard size must be positive, got " + maxShardBytes);
        createDirectories(dir);
        ObjectNode config = hfConfig(g.config());
        if (bf16Experts) config.remove("quantization_config");
        writeJson(dir.resolve("config.json"), config);
        List<HfTensorLayout.Part> parts = HfTensorLayout.of(g.config(), g.originalTensors());

        List<List<SafetensorsFileWriter.Tensor>> shards = new ArrayList<>();
        List<SafetensorsFileWriter.Tensor> current = new ArrayList<>();
        long currentBytes = 0, totalBytes = 0;
        try (SourceCache cache = new SourceCache(g)) {
            for (HfTensorLayout.Part p : parts) {
                SafetensorsFileWriter.Tensor t = new SafetensorsFileWriter.Tensor(
                        p.name(), p.source().dtype(), p.shape(), seg -> cache.fill(p, seg));
                if (bf16Experts && p.name().endsWith("_scales")) continue;
                if (bf16Experts && p.name().endsWith("_blocks")) t = floatExperts(g, p);
                long n = t.byteSize();
                if (!current.isEmpty() && currentBytes + n > maxShardBytes) {
                    shards.add(current);
                    current = new ArrayList<>();
                    currentBytes = 0;
                }
                current.add(t);
                currentBytes += n;
                totalBytes += n;
            }
            if (!current.isEmpty()) shards.add(current);

            ObjectNode index = Json.MAPPER.createObjectNode();
            index.putObject("metadata").put("total_size", totalBytes);
            ObjectNode weightMap = index.putObject("weight_map");
            for (int s = 0; s < shards.size(); s++) {
                String file = String.format("model-%05d-of-%05d.safetensors", s + 1, shards.size());
                SafetensorsFileWriter.write(dir.resolve(file), shards.get(s), FILE_METADATA);
                for (SafetensorsFileWriter.Tensor t : shards.get(s)) weightMap.put(t.name(), file);
            }
            writeJson(dir.resolve(ShardIndex.FILE), index);
        }
    }

    /** The MXFP4 experts of {@code blocks} ({@code [E, out, in/32, 16]}) as BF16 {@code [E, in, out]}, named without "_blocks". */
    private static SafetensorsFileWriter.Tensor floatExperts(TestModelGenerator g, HfTensorLayout.Part blocks) {
        long[] s = blocks.shape();
        int experts = (int) s[0], out = (int) s[1], in = (int) (s[2] * 32);
        String name = blocks.name().substring(0, blocks.name().length() - "_blocks".length());
        String scalesName = blocks.source().name().replace(".blocks", ".scales");
        TensorSpec scales = g.originalTensors().stream()
                .filter(t -> t.name().equals(scalesName))
                .findFirst()
                .orElseThrow();
        return new SafetensorsFileWriter.Tensor(name, DType.BF16, new long[] {experts, in, out}, dst -> {
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment codes = arena.allocate(blocks.source().byteSize()),
                        sc = arena.allocate(scales.byteSize());
                g.fill(blocks.source(), codes);
                g.fill(scales, sc);
                float[] row = new float[in];
                for (int e = 0; e < experts; e++)
                    for (int r = 0; r < out; r++) {
                        long at = (long) e * out + r;
                        Mxfp4.decodeOpenAiRow(codes, at * in / 2, sc, at * (in / 32), in, row, 0);
                        for (int c = 0; c < in; c++)
                            dst.set(LE.I16, 2 * (((long) e * in + c) * out + r), Bf16.fromFloat(row[c]));
                    }
            }
        });
    }

    /** OpenAI's original/config.json: the reference ModelConfig's keys (rms_norm_eps only when not 1e-5). */
    static ObjectNode originalConfig(ModelConfig c) {
        ObjectNode o = Json.MAPPER.createObjectNode();
        o.put("num_hidden_layers", c.numHiddenLayers());
        o.put("num_experts", c.numExperts());
        o.put("experts_per_token", c.expertsPerToken());
        putWidths(o, c);
        o.put("rope_theta", num(c.ropeTheta()));
        o.put("rope_scaling_factor", num(c.ropeScalingFactor()));
        o.put("rope_ntk_alpha", num(c.ropeNtkAlpha()));
        o.put("rope_ntk_beta", num(c.ropeNtkBeta()));
        if (c.rmsNormEps() != ConfigJson.DEFAULT_RMS_NORM_EPS) o.put("rms_norm_eps", num(c.rmsNormEps()));
        return o;
    }

    /** Hugging Face's config.json for GptOssForCausalLM. */
    static ObjectNode hfConfig(ModelConfig c) {
        ObjectNode o = Json.MAPPER.createObjectNode();
        o.putArray("architectures").add("GptOssForCausalLM");
        o.put("model_type", "gpt_oss");
        o.put("attention_bias", true);
        o.put("num_hidden_layers", c.numHiddenLayers());
        o.put("num_local_experts", c.numExperts());
        o.put("num_experts_per_tok", c.expertsPerToken());
        o.put("experts_per_token", c.expertsPerToken());
        putWidths(o, c);
        o.put("max_position_embeddings", (long) Math.round(c.initialContextLength() * (double) c.ropeScalingFactor()));
        o.put("rope_theta", num(c.ropeTheta()));
        o.put("rms_norm_eps", num(c.rmsNormEps()));
        ObjectNode rs = o.putObject("rope_scaling");
        rs.put("rope_type", "yarn");
        rs.put("factor", num(c.ropeScalingFactor()));
        rs.put("beta_fast", num(c.ropeNtkBeta()));
        rs.put("beta_slow", num(c.ropeNtkAlpha()));
        rs.put("original_max_position_embeddings", c.initialContextLength());
        rs.put("truncate", false);
        ArrayNode types = o.putArray("layer_types");
        for (int l = 0; l < c.numHiddenLayers(); l++) types.add(l % 2 == 0 ? "sliding_attention" : "full_attention");
        o.putObject("quantization_config").put("quant_method", "mxfp4");
        o.put("tie_word_embeddings", false);
        return o;
    }

    /** The keys both config.json files share, under the same names. */
    private static void putWidths(ObjectNode o, ModelConfig c) {
        o.put("vocab_size", c.vocabSize());
        o.put("hidden_size", c.hiddenSize());
        o.put("intermediate_size", c.intermediateSize());
        o.put("swiglu_limit", num(c.swigluLimit()));
        o.put("head_dim", c.headDim());
        o.put("num_attention_heads", c.numAttentionHeads());
        o.put("num_key_value_heads", c.numKeyValueHeads());
        o.put("sliding_window", c.slidingWindow());
        o.put("initial_context_length", c.initialContextLength());
    }

    /** The shortest decimal that reads back as exactly {@code f}. */
    private static double num(float f) {
        return Double.parseDouble(Float.toString(f));
    }

    private static void createDirectories(Path dir) {
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new GossException(dir + ": cannot create folder (" + e.getMessage() + ")", e);
        }
    }

    public static void writeJson(Path file, ObjectNode node) {
        try {
            Files.write(file, Json.MAPPER.writeValueAsBytes(node));
        } catch (IOException e) {
            throw new GossException(file + ": cannot write (" + e.getMessage() + ")", e);
        }
    }

    /**
     * Fills HF tensors from the generator. A part that is a whole original tensor is generated
     * straight into the output; row slices (q/k/v) share one generated copy of their source, kept in
     * native memory until a different source is needed.
     */
    private static final class SourceCache implements AutoCloseable {
        private final TestModelGenerator g;
        private Arena arena;
        private TensorSpec cached;
        private MemorySegment bytes;

        SourceCache(TestModelGenerator g) {
            this.g = g;
        }

        void fill(HfTensorLayout.Part p, MemorySegment dst) {
            if (p.firstRow() == 0 && dst.byteSize() == p.source().byteSize()) {
                g.fill(p.source(), dst);
                return;
            }
            if (cached != p.source()) {
                close();
                arena = Arena.ofConfined();
                bytes = arena.allocate(p.source().byteSize(), 64);
                g.fill(p.source(), bytes);
                cached = p.source();
            }
            MemorySegment.copy(bytes, p.byteOffset(), dst, 0, dst.byteSize());
        }

        @Override
        public void close() {
            if (arena != null) arena.close();
            arena = null;
            cached = null;
            bytes = null;
        }
    }
}
