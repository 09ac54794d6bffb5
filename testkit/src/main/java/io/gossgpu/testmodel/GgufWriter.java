package io.gossgpu.testmodel;

import static io.gossgpu.model.gguf.GgufConfig.key;

import io.gossgpu.GossException;
import io.gossgpu.model.ModelConfig;
import io.gossgpu.model.gguf.GgmlType;
import io.gossgpu.model.gguf.GgufConfig;
import io.gossgpu.model.gguf.GgufFileWriter;
import io.gossgpu.model.gguf.GgufValue;
import io.gossgpu.model.gguf.GgufValueType;
import io.gossgpu.quant.Bf16;
import io.gossgpu.quant.LE;
import io.gossgpu.quant.Mxfp4;
import io.gossgpu.quant.Q8_0;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.List;
import java.util.function.LongUnaryOperator;

/**
 * Writes a generated test model as llama.cpp's gpt-oss GGUF: llama.cpp's metadata keys and tensor
 * names, Q/K/V split out of the fused QKV, OpenAI's interleaved mlp1 de-interleaved into
 * {@code ffn_gate_exps} (even rows) and {@code ffn_up_exps} (odd rows) and repacked into ggml
 * {@code block_mxfp4} (same E8M0 scale bytes), 1-D tensors as F32.
 */
public final class GgufWriter {

    /** Type of the 2-D dense matrices (embedding, unembedding, attention, router). */
    public enum DenseType {
        /** Bit-identical to the generator's BF16 values. */
        BF16,
        F32,
        /** ggml-org gpt-oss release style: embedding, output and attention Q8_0; the router stays F32. */
        Q8_0
    }

    /** Whose tensor names and layout to write. */
    public enum Layout {
        /** llama.cpp's convert_hf_to_gguf.py, architecture "gpt-oss". */
        LLAMA_CPP,
        /**
         * Ollama's first gpt-oss conversion (the {@code ollama pull gpt-oss:20b} blob; ollama/ollama convert_gptoss.go
         * as of Aug 2025): architecture "gptoss", OpenAI's names mapped one to one (fused {@code attn_qkv},
         * row-interleaved {@code ffn_gate_up_exps}, {@code attn_out}, {@code attn_sinks}, {@code ffn_norm}), BF16 2-D
         * tensors but for the F32 router, F32 vectors, and MXFP4 as its type 4 ({@link io.gossgpu.model.DType#MXFP4_OLLAMA}).
         * {@code dense} is ignored.
         */
        OLLAMA
    }

    /**
     * @param dense  type of the 2-D dense matrices
     * @param name   {@code general.name}
     * @param tokens when not null, written as {@code tokenizer.ggml.tokens} (with model "gpt2", pre "gpt-4o")
     */
    public record Options(DenseType dense, String name, List<String> tokens, Layout layout) {
        public static Options defaults() {
            return new Options(DenseType.BF16, "goss-gpu test model", null, Layout.LLAMA_CPP);
        }

        public Options withDense(DenseType d) {
            return new Options(d, name, tokens, layout);
        }

        public Options withTokens(List<String> t) {
            return new Options(dense, name, t, layout);
        }

        public Options withLayout(Layout l) {
            return new Options(dense, name, tokens, l);
        }
    }

    private GgufWriter() {}

    public static void write(TestModelGenerator g, Path file, Options opts) {
        write(g, opts, w -> w.write(file));
    }

    /** The model as a split GGUF of {@code shards} files in {@code dir} (see {@link GgufSplit}); returns the first. */
    public static Path writeSplit(TestModelGenerator g, Path dir, String base, int shards, Options opts) {
        Path[] first = new Path[1];
        write(g, opts, w -> first[0] = w.writeSplit(dir, base, shards));
        return first[0];
    }

    private static void write(TestModelGenerator g, Options opts, java.util.function.Consumer<GgufFileWriter> out) {
        ModelConfig c = g.config();
        if (c.swigluLimit() != GgufConfig.SWIGLU_LIMIT)
            throw new GossException("GGUF cannot carry swiglu_limit " + c.swigluLimit() + " (llama.cpp fixes it at 7)");
        GgufFileWriter w = new GgufFileWriter(3);
        try (GeneratedTensors src = new GeneratedTensors(g)) {
            if (opts.layout() == Layout.OLLAMA) {
                ollamaMetadata(w, c, opts);
                ollamaTensors(w, c, src);
            } else {
                metadata(w, c, opts);
                tensors(w, c, src, opts.dense());
            }
            out.accept(w);
        }
    }

    /** The keys Ollama's first converter wrote, under its architecture name. */
    private static void ollamaMetadata(GgufFileWriter w, ModelConfig c, Options opts) {
        String a = GgufConfig.OLLAMA_ARCH;
        w.put(GgufConfig.ARCH_KEY, GgufValue.string(a));
        w.put("general.name", GgufValue.string(opts.name()));
        w.put("general.file_type", GgufValue.u32(4));
        w.put(GgufConfig.key(a, GgufConfig.CONTEXT_LENGTH), GgufValue.u32((long)
                (c.initialContextLength() * (double) c.ropeScalingFactor())));
        w.put(GgufConfig.key(a, GgufConfig.BLOCK_COUNT), GgufValue.u32(c.numHiddenLayers()));
        w.put(GgufConfig.key(a, GgufConfig.EMBEDDING_LENGTH), GgufValue.u32(c.hiddenSize()));
        w.put(GgufConfig.key(a, GgufConfig.FEED_FORWARD_LENGTH), GgufValue.u32(c.intermediateSize()));
        w.put(GgufConfig.key(a, GgufConfig.EXPERT_COUNT), GgufValue.u32(c.numExperts()));
        w.put(GgufConfig.key(a, GgufConfig.EXPERT_USED_COUNT), GgufValue.u32(c.expertsPerToken()));
        w.put(GgufConfig.key(a, GgufConfig.HEAD_COUNT), GgufValue.u32(c.numAttentionHeads()));
        w.put(GgufConfig.key(a, GgufConfig.HEAD_COUNT_KV), GgufValue.u32(c.numKeyValueHeads()));
        w.put(GgufConfig.key(a, GgufConfig.KEY_LENGTH), GgufValue.u32(c.headDim()));
        w.put(GgufConfig.key(a, GgufConfig.VALUE_LENGTH), GgufValue.u32(c.headDim()));
        w.put(GgufConfig.key(a, GgufConfig.RMS_EPS), GgufValue.f32(c.rmsNormEps()));
        w.put(GgufConfig.key(a, GgufConfig.SLIDING_WINDOW), GgufValue.u32(c.slidingWindow()));
        w.put(GgufConfig.key(a, GgufConfig.ROPE_FREQ_BASE), GgufValue.f32(c.ropeTheta()));
        w.put(GgufConfig.key(a, GgufConfig.ROPE_SCALING_FACTOR), GgufValue.f32(c.ropeScalingFactor()));
        w.put(GgufConfig.key(a, GgufConfig.ROPE_SCALING_ORIG_CTX), GgufValue.u32(c.initialContextLength()));
        if (c.ropeNtkAlpha() != GgufConfig.DEFAULT_NTK_ALPHA || c.ropeNtkBeta() != GgufConfig.DEFAULT_NTK_BETA)
            throw new GossException("Ollama's gptoss metadata cannot carry YaRN's ntk alpha/beta (" + c.ropeNtkAlpha()
                    + ", " + c.ropeNtkBeta() + ")");
    }

    /** OpenAI's tensors renamed as Ollama's first converter did, each written whole. */
    private static void ollamaTensors(GgufFileWriter w, ModelConfig c, GeneratedTensors src) {
        long h = c.hiddenSize(), e = c.numExperts(), i = c.intermediateSize();
        dense(w, src, "token_embd.weight", GgmlType.BF16, "embedding.weight", 0, c.vocabSize());
        for (int n = 0; n < c.numHiddenLayers(); n++) {
            String p = "blk." + n + ".", o = "block." + n + ".";
            vector(w, src, p + "attn_norm.weight", o + "attn.norm.scale", new long[] {h}, k -> k);
            dense(w, src, p + "attn_qkv.weight", GgmlType.BF16, o + "attn.qkv.weight", 0, c.qkvDim());
            vector(w, src, p + "attn_qkv.bias", o + "attn.qkv.bias", new long[] {c.qkvDim()}, k -> k);
            vector(w, src, p + "attn_sinks", o + "attn.sinks", new long[] {c.numAttentionHeads()}, k -> k);
            dense(w, src, p + "attn_out.weight", GgmlType.BF16, o + "attn.out.weight", 0, h);
            vector(w, src, p + "attn_out.bias", o + "attn.out.bias", new long[] {h}, k -> k);
            vector(w, src, p + "ffn_norm.weight", o + "mlp.norm.scale", new long[] {h}, k -> k);
            dense(w, src, p + "ffn_gate_inp.weight", GgmlType.F32, o + "mlp.gate.weight", 0, e);
            vector(w, src, p + "ffn_gate_inp.bias", o + "mlp.gate.bias", new long[] {e}, k -> k);
            ollamaExperts(w, src, p + "ffn_gate_up_exps.weight", o + "mlp.mlp1_weight", e, 2 * i, h);
            dense(w, src, p + "ffn_gate_up_exps.bias", GgmlType.BF16, o + "mlp.mlp1_bias", 0, e);
            ollamaExperts(w, src, p + "ffn_down_exps.weight", o + "mlp.mlp2_weight", e, h, i);
            dense(w, src, p + "ffn_down_exps.bias", GgmlType.BF16, o + "mlp.mlp2_bias", 0, e);
        }
        vector(w, src, "output_norm.weight", "norm.scale", new long[] {h}, k -> k);
        dense(w, src, "output.weight", GgmlType.BF16, "unembedding.weight", 0, c.vocabSize());
    }

    /** Ollama's type 4: per 32 values, the scale byte then OpenAI's 16 code bytes as they are. */
    private static void ollamaExperts(
            GgufFileWriter w, GeneratedTensors src, String name, String from, long experts, long rows, long cols) {
        long blocks = experts * rows * (cols / Mxfp4.BLOCK);
        w.tensor(name, GgmlType.MXFP4_OLLAMA, new long[] {cols, rows, experts}, dst -> {
            MemorySegment codes = src.bytes(from + ".blocks"), scales = src.bytes(from + ".scales");
            for (long b = 0; b < blocks; b++) {
                dst.set(LE.U8, b * Mxfp4.GGML_BLOCK_BYTES, scales.get(LE.U8, b));
                MemorySegment.copy(codes, b * 16, dst, b * Mxfp4.GGML_BLOCK_BYTES + 1, 16);
            }
        });
    }

    private static void metadata(GgufFileWriter w, ModelConfig c, Options opts) {
        w.put(GgufConfig.ARCH_KEY, GgufValue.string(GgufConfig.ARCH));
        w.put("general.name", GgufValue.string(opts.name()));
        w.putAlignment();
        w.put(key(GgufConfig.BLOCK_COUNT), GgufValue.u32(c.numHiddenLayers()));
        w.put(key(GgufConfig.CONTEXT_LENGTH), GgufValue.u32((long)
                (c.initialContextLength() * (double) c.ropeScalingFactor())));
        w.put(key(GgufConfig.EMBEDDING_LENGTH), GgufValue.u32(c.hiddenSize()));
        w.put(key(GgufConfig.FEED_FORWARD_LENGTH), GgufValue.u32(c.intermediateSize()));
        w.put(key(GgufConfig.HEAD_COUNT), GgufValue.u32(c.numAttentionHeads()));
        w.put(key(GgufConfig.HEAD_COUNT_KV), GgufValue.u32(c.numKeyValueHeads()));
        w.put(key(GgufConfig.ROPE_FREQ_BASE), GgufValue.f32(c.ropeTheta()));
        w.put(key(GgufConfig.RMS_EPS), GgufValue.f32(c.rmsNormEps()));
        w.put(key(GgufConfig.EXPERT_COUNT), GgufValue.u32(c.numExperts()));
        w.put(key(GgufConfig.EXPERT_USED_COUNT), GgufValue.u32(c.expertsPerToken()));
        w.put(key(GgufConfig.KEY_LENGTH), GgufValue.u32(c.headDim()));
        w.put(key(GgufConfig.VALUE_LENGTH), GgufValue.u32(c.headDim()));
        w.put(key(GgufConfig.SLIDING_WINDOW), GgufValue.u32(c.slidingWindow()));
        w.put(key(GgufConfig.EXPERT_FEED_FORWARD_LENGTH), GgufValue.u32(c.intermediateSize()));
        w.put(key(GgufConfig.ROPE_SCALING_TYPE), GgufValue.string("yarn"));
        w.put(key(GgufConfig.ROPE_SCALING_FACTOR), GgufValue.f32(c.ropeScalingFactor()));
        w.put(key(GgufConfig.ROPE_SCALING_ORIG_CTX), GgufValue.u32(c.initialContextLength()));
        if (c.ropeNtkAlpha() != GgufConfig.DEFAULT_NTK_ALPHA)
            w.put(key(GgufConfig.YARN_BETA_SLOW), GgufValue.f32(c.ropeNtkAlpha()));
        if (c.ropeNtkBeta() != GgufConfig.DEFAULT_NTK_BETA)
            w.put(key(GgufConfig.YARN_BETA_FAST), GgufValue.f32(c.ropeNtkBeta()));
        if (opts.tokens() != null) {
            w.put("tokenizer.ggml.model", GgufValue.string("gpt2"));
            w.put("tokenizer.ggml.pre", GgufValue.string("gpt-4o"));
            w.put("tokenizer.ggml.tokens", GgufValue.array(GgufValueType.STRING, opts.tokens()));
        }
    }

    private static void tensors(GgufFileWriter w, ModelConfig c, GeneratedTensors src, DenseType dense) {
        long h = c.hiddenSize(), v = c.vocabSize(), e = c.numExperts(), i = c.intermediateSize();
        int q = c.qDim(), kv = c.kvDim();
        GgmlType matrix = switch (dense) {
            case BF16 -> GgmlType.BF16;
            case F32 -> GgmlType.F32;
            case Q8_0 -> GgmlType.Q8_0;
        };
        GgmlType router = dense == DenseType.Q8_0 ? GgmlType.F32 : matrix;
        dense(w, src, "token_embd.weight", matrix, "embedding.weight", 0, v);
        for (int n = 0; n < c.numHiddenLayers(); n++) {
            String p = "blk." + n + ".", o = "block." + n + ".";
            vector(w, src, p + "attn_norm.weight", o + "attn.norm.scale", new long[] {h}, k -> k);
            dense(w, src, p + "attn_q.weight", matrix, o + "attn.qkv.weight", 0, q);
            vector(w, src, p + "attn_q.bias", o + "attn.qkv.bias", new long[] {q}, k -> k);
            dense(w, src, p + "attn_k.weight", matrix, o + "attn.qkv.weight", q, kv);
            vector(w, src, p + "attn_k.bias", o + "attn.qkv.bias", new long[] {kv}, k -> q + k);
            dense(w, src, p + "attn_v.weight", matrix, o + "attn.qkv.weight", q + kv, kv);
            vector(w, src, p + "attn_v.bias", o + "attn.qkv.bias", new long[] {kv}, k -> q + kv + k);
            vector(w, src, p + "attn_sinks.weight", o + "attn.sinks", new long[] {c.numAttentionHeads()}, k -> k);
            dense(w, src, p + "attn_output.weight", matrix, o + "attn.out.weight", 0, h);
            vector(w, src, p + "attn_output.bias", o + "attn.out.bias", new long[] {h}, k -> k);
            vector(w, src, p + "post_attention_norm.weight", o + "mlp.norm.scale", new long[] {h}, k -> k);
            dense(w, src, p + "ffn_gate_inp.weight", router, o + "mlp.gate.weight", 0, e);
            vector(w, src, p + "ffn_gate_inp.bias", o + "mlp.gate.bias", new long[] {e}, k -> k);
            // mlp1 rows interleave gate (even) and up (odd); so does its bias, per expert.
            experts(w, src, p + "ffn_gate_exps.weight", o + "mlp.mlp1_weight", e, i, h, 2, 0);
            vector(w, src, p + "ffn_gate_exps.bias", o + "mlp.mlp1_bias", new long[] {i, e}, k -> 2 * k);
            experts(w, src, p + "ffn_up_exps.weight", o + "mlp.mlp1_weight", e, i, h, 2, 1);
            vector(w, src, p + "ffn_up_exps.bias", o + "mlp.mlp1_bias", new long[] {i, e}, k -> 2 * k + 1);
            experts(w, src, p + "ffn_down_exps.weight", o + "mlp.mlp2_weight", e, h, i, 1, 0);
            vector(w, src, p + "ffn_down_exps.bias", o + "mlp.mlp2_bias", new long[] {h, e}, k -> k);
        }
        vector(w, src, "output_norm.weight", "norm.scale", new long[] {h}, k -> k);
        dense(w, src, "output.weight", matrix, "unembedding.weight", 0, v);
    }

    /** Rows {@code [first, first+rows)} of a BF16 matrix, converted to {@code type}. */
    private static void dense(
            GgufFileWriter w, GeneratedTensors src, String name, GgmlType type, String from, long first, long rows) {
        long[] shape = src.spec(from).shape();
        int cols = (int) shape[shape.length - 1];
        long outRow = type.dtype().rowBytes(cols);
        w.tensor(name, type, new long[] {cols, rows}, dst -> {
            MemorySegment s = src.bytes(from);
            float[] row = new float[cols];
            for (long r = 0; r < rows; r++) {
                long in = (first + r) * cols * 2, out = r * outRow;
                switch (type) {
                    case BF16 -> MemorySegment.copy(s, in, dst, out, 2L * cols);
                    case F32 -> {
                        for (int k = 0; k < cols; k++)
                            dst.set(LE.F32, out + 4L * k, Bf16.toFloat(s.get(LE.I16, in + 2L * k)));
                    }
                    case Q8_0 -> {
                        for (int k = 0; k < cols; k++) row[k] = Bf16.toFloat(s.get(LE.I16, in + 2L * k));
                        byte[] qb = Q8_0.quantizeRow(row, 0, cols);
                        MemorySegment.copy(MemorySegment.ofArray(qb), 0, dst, out, qb.length);
                    }
                    default -> throw new IllegalStateException(type.toString());
                }
            }
        });
    }

    /**
     * An F32 tensor whose flat element {@code k} is BF16 element {@code index(k)} of {@code from}; for a
     * per-expert bias ({@code ne = {n, experts}}) {@code k = expert·n + j}.
     */
    private static void vector(
            GgufFileWriter w, GeneratedTensors src, String name, String from, long[] ne, LongUnaryOperator index) {
        long n = 1;
        for (long d : ne) n *= d;
        long count = n;
        w.tensor(name, GgmlType.F32, ne, dst -> {
            MemorySegment s = src.bytes(from);
            for (long k = 0; k < count; k++)
                dst.set(LE.F32, 4 * k, Bf16.toFloat(s.get(LE.I16, 2 * index.applyAsLong(k))));
        });
    }

    /**
     * ggml MXFP4 {@code [experts, rows, cols]} (ne = {cols, rows, experts}) from OpenAI's
     * {@code .blocks}/{@code .scales}: output row r of expert x is source row {@code r*step + phase}.
     */
    private static void experts(
            GgufFileWriter w,
            GeneratedTensors src,
            String name,
            String from,
            long experts,
            long rows,
            long cols,
            int step,
            int phase) {
        int groups = (int) (cols / Mxfp4.BLOCK);
        long srcRows = rows * step;
        w.tensor(name, GgmlType.MXFP4, new long[] {cols, rows, experts}, dst -> {
            MemorySegment blocks = src.bytes(from + ".blocks"), scales = src.bytes(from + ".scales");
            byte[] codes = new byte[(int) cols], sc = new byte[groups];
            long outRow = (long) groups * Mxfp4.GGML_BLOCK_BYTES;
            for (long x = 0; x < experts; x++)
                for (long r = 0; r < rows; r++) {
                    long srcRow = x * srcRows + r * step + phase;
                    long cb = srcRow * groups * 16;
                    for (int b = 0; b < cols / 2; b++) {
                        int packed = blocks.get(LE.U8, cb + b) & 0xff;
                        codes[2 * b] = (byte) (packed & 0xf);
                        codes[2 * b + 1] = (byte) (packed >>> 4);
                    }
                    MemorySegment.copy(scales, LE.U8, srcRow * groups, sc, 0, groups);
                    byte[] packed = Mxfp4.packGgml(codes, sc);
                    MemorySegment.copy(MemorySegment.ofArray(packed), 0, dst, (x * rows + r) * outRow, packed.length);
                }
        });
    }
}
