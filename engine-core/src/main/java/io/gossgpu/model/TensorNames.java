package io.gossgpu.model;

import io.gossgpu.model.ExpectedShape.Dim;
import io.gossgpu.model.ExpectedShape.Dims;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * The tensor names of each checkpoint layout, mapped to {@link ModelWeights}. Every tensor the
 * layout needs must be present with the shape the config gives it ({@link ExpectedShape}), and every
 * tensor in the file must be one the layout knows: each is a {@link ModelFormatException} naming the tensor.
 */
abstract class TensorNames {

    static TensorNames forFormat(ModelFormat format) {
        return switch (format) {
            case ORIGINAL -> new Original();
            case HF -> new HuggingFace();
            case GGUF, OLLAMA -> new Gguf();
        };
    }

    /** Builds the weights, recording which tensors were used. */
    final ModelWeights map(Checkpoint ckpt) {
        Lookup t = new Lookup(ckpt);
        ModelConfig c = ckpt.config();
        // Every layer has more than one tensor: a larger count is corrupt (and must not size the list below).
        if (c.numHiddenLayers() > ckpt.tensors().size())
            throw new ModelFormatException(
                    ckpt.path(),
                    "the config's " + c.numHiddenLayers() + " layers cannot fit in the "
                            + ckpt.tensors().size()
                            + " tensors the model holds (num_hidden_layers / block_count is corrupt)");
        List<LayerWeights> layers = new ArrayList<>(c.numHiddenLayers());
        for (int n = 0; n < c.numHiddenLayers(); n++) layers.add(layer(t, c, n));
        ModelWeights w = new ModelWeights(c, embedding(t), List.copyOf(layers), finalNorm(t), unembedding(t));
        t.rejectUnused();
        return w;
    }

    private final String embedding, finalNorm, unembedding;

    /** The names of the tensors every layout holds once: the embedding, the final norm's scale, the unembedding. */
    TensorNames(String embedding, String finalNorm, String unembedding) {
        this.embedding = embedding;
        this.finalNorm = finalNorm;
        this.unembedding = unembedding;
    }

    private WeightView embedding(Lookup t) {
        return t.view(embedding, t.d.vocab(), t.d.hidden());
    }

    private WeightView finalNorm(Lookup t) {
        return t.view(finalNorm, t.d.hidden());
    }

    private WeightView unembedding(Lookup t) {
        return t.view(unembedding, t.d.vocab(), t.d.hidden());
    }

    abstract LayerWeights layer(Lookup t, ModelConfig c, int n);

    /** Q, K and V (weights and biases) cut from a fused QKV weight and bias: rows [0, q), then kv, then kv. */
    record Qkv(WeightView q, WeightView qBias, WeightView k, WeightView kBias, WeightView v, WeightView vBias) {
        static Qkv split(WeightView w, WeightView b, ModelConfig c) {
            int q = c.qDim(), kv = c.kvDim();
            return new Qkv(
                    w.sliceRows(w.name() + "[q]", 0, q),
                    b.sliceCols(b.name() + "[q]", 0, q),
                    w.sliceRows(w.name() + "[k]", q, kv),
                    b.sliceCols(b.name() + "[k]", q, kv),
                    w.sliceRows(w.name() + "[v]", q + kv, kv),
                    b.sliceCols(b.name() + "[v]", q + kv, kv));
        }
    }

    /** The SwiGLU gate (even rows) and linear part (odd rows) of OpenAI's interleaved mlp1, with their biases ({@code [E, 2I]}). */
    record GateUp(WeightView gate, WeightView gateBias, WeightView up, WeightView upBias) {
        static GateUp split(WeightView w, WeightView bias) {
            WeightView b = bias.rowsAsExperts(bias.name());
            return new GateUp(
                    w.everyOtherRow(w.name() + "[gate]", 0),
                    b.everyOtherCol(b.name() + "[gate]", 0),
                    w.everyOtherRow(w.name() + "[up]", 1),
                    b.everyOtherCol(b.name() + "[up]", 1));
        }
    }

    /** Name lookups against one checkpoint that remember what was asked for. */
    static final class Lookup {
        private final Checkpoint ckpt;
        private final Set<String> used = new HashSet<>();
        /** The config's dimensions, which every lookup states its tensor's expected shape in. */
        final Dims d;

        private final String configSource;

        Lookup(Checkpoint ckpt) {
            this.ckpt = ckpt;
            this.d = Dims.of(ckpt.config());
            this.configSource = ckpt.format() == ModelFormat.GGUF || ckpt.format() == ModelFormat.OLLAMA
                    ? "the GGUF metadata"
                    : "config.json";
        }

        /** The tensor called {@code name}, which must have the shape {@code shape}. */
        TensorData tensor(String name, Dim... shape) {
            used.add(name);
            return ExpectedShape.check(ckpt.tensor(name), configSource, shape);
        }

        boolean has(String name) {
            return ckpt.tensors().containsKey(name);
        }

        /** {@code name}, or {@code alternative} when the checkpoint has no {@code name}. */
        String either(String name, String alternative) {
            return has(name) || !has(alternative) ? name : alternative;
        }

        /** A dense weight of shape {@code shape}, decoded at load when its type is one no backend runs. */
        WeightView view(String name, Dim... shape) {
            return WeightView.of(ckpt.conversions().readable(tensor(name, shape)));
        }

        /** MoE expert weights ({@link io.gossgpu.model.Conversions#experts}) of shape {@code shape} in the file. */
        WeightView experts(String name, boolean transposed, Dim... shape) {
            return WeightView.of(ckpt.conversions().experts(tensor(name, shape), transposed));
        }

        /** OpenAI's MXFP4 experts: {@code experts × rows × cols} values as codes and scales tensors. */
        WeightView mxfp4(String name, String codes, String scales, Dim rows, Dim cols) {
            return WeightView.mxfp4OpenAi(
                    name,
                    tensor(codes, d.experts(), rows, cols.blocks(), ExpectedShape.BLOCK_BYTES),
                    tensor(scales, d.experts(), rows, cols.blocks()));
        }

        void rejectUnused() {
            Set<String> extra = new TreeSet<>(ckpt.tensors().keySet());
            extra.removeAll(used);
            if (!extra.isEmpty())
                throw new ModelFormatException(
                        ckpt.path(),
                        extra.iterator().next(),
                        "unexpected tensor for a gpt-oss model (" + extra.size() + " unexpected in all)");
        }
    }

    /** OpenAI's original/ layout: fused QKV, row-interleaved mlp1 (gate, linear, gate, linear, …). */
    static final class Original extends TensorNames {
        Original() {
            super("embedding.weight", "norm.scale", "unembedding.weight");
        }

        LayerWeights layer(Lookup t, ModelConfig c, int n) {
            String p = "block." + n + ".";
            Dims d = t.d;
            Qkv qkv = Qkv.split(
                    t.view(p + "attn.qkv.weight", d.qkv(), d.hidden()), t.view(p + "attn.qkv.bias", d.qkv()), c);
            GateUp mlp1 = GateUp.split(
                    t.mxfp4(
                            p + "mlp.mlp1_weight",
                            p + "mlp.mlp1_weight.blocks",
                            p + "mlp.mlp1_weight.scales",
                            d.gateUp(),
                            d.hidden()),
                    t.view(p + "mlp.mlp1_bias", d.experts(), d.gateUp()));
            return new LayerWeights(
                    t.view(p + "attn.norm.scale", d.hidden()),
                    qkv.q(),
                    qkv.qBias(),
                    qkv.k(),
                    qkv.kBias(),
                    qkv.v(),
                    qkv.vBias(),
                    t.view(p + "attn.sinks", d.heads()),
                    t.view(p + "attn.out.weight", d.hidden(), d.q()),
                    t.view(p + "attn.out.bias", d.hidden()),
                    t.view(p + "mlp.norm.scale", d.hidden()),
                    t.view(p + "mlp.gate.weight", d.experts(), d.hidden()),
                    t.view(p + "mlp.gate.bias", d.experts()),
                    mlp1.gate(),
                    mlp1.gateBias(),
                    mlp1.up(),
                    mlp1.upBias(),
                    t.mxfp4(
                            p + "mlp.mlp2_weight",
                            p + "mlp.mlp2_weight.blocks",
                            p + "mlp.mlp2_weight.scales",
                            d.hidden(),
                            d.intermediate()),
                    t.view(p + "mlp.mlp2_bias", d.experts(), d.hidden()).rowsAsExperts(p + "mlp.mlp2_bias"));
        }
    }

    /** Hugging Face transformers layout: separate q/k/v, gate_up_proj interleaved like OpenAI's mlp1. */
    static final class HuggingFace extends TensorNames {
        HuggingFace() {
            super("model.embed_tokens.weight", "model.norm.weight", "lm_head.weight");
        }

        LayerWeights layer(Lookup t, ModelConfig c, int n) {
            String p = "model.layers." + n + ".";
            String x = p + "mlp.experts.";
            Dims d = t.d;
            // BF16 fine-tunes (no quantization_config) store the experts as floats, transposed: [E, in, out]
            boolean floats = !t.has(x + "gate_up_proj_blocks") && t.has(x + "gate_up_proj");
            WeightView gateUp = floats
                    ? t.experts(x + "gate_up_proj", true, d.experts(), d.hidden(), d.gateUp())
                    : t.mxfp4(
                            x + "gate_up_proj",
                            x + "gate_up_proj_blocks",
                            x + "gate_up_proj_scales",
                            d.gateUp(),
                            d.hidden());
            WeightView down = floats
                    ? t.experts(x + "down_proj", true, d.experts(), d.intermediate(), d.hidden())
                    : t.mxfp4(
                            x + "down_proj",
                            x + "down_proj_blocks",
                            x + "down_proj_scales",
                            d.hidden(),
                            d.intermediate());
            GateUp mlp1 = GateUp.split(gateUp, t.view(x + "gate_up_proj_bias", d.experts(), d.gateUp()));
            return new LayerWeights(
                    t.view(p + "input_layernorm.weight", d.hidden()),
                    t.view(p + "self_attn.q_proj.weight", d.q(), d.hidden()),
                    t.view(p + "self_attn.q_proj.bias", d.q()),
                    t.view(p + "self_attn.k_proj.weight", d.kv(), d.hidden()),
                    t.view(p + "self_attn.k_proj.bias", d.kv()),
                    t.view(p + "self_attn.v_proj.weight", d.kv(), d.hidden()),
                    t.view(p + "self_attn.v_proj.bias", d.kv()),
                    t.view(p + "self_attn.sinks", d.heads()),
                    t.view(p + "self_attn.o_proj.weight", d.hidden(), d.q()),
                    t.view(p + "self_attn.o_proj.bias", d.hidden()),
                    t.view(p + "post_attention_layernorm.weight", d.hidden()),
                    t.view(p + "mlp.router.weight", d.experts(), d.hidden()),
                    t.view(p + "mlp.router.bias", d.experts()),
                    mlp1.gate(),
                    mlp1.gateBias(),
                    mlp1.up(),
                    mlp1.upBias(),
                    down,
                    t.view(x + "down_proj_bias", d.experts(), d.hidden()).rowsAsExperts(x + "down_proj_bias"));
        }
    }

    /**
     * GGUF names for gpt-oss: llama.cpp's (architecture "gpt-oss": separate Q/K/V, gate and up experts split), and
     * Ollama's (its first "gptoss" conversion: OpenAI's fused {@code attn_qkv} and row-interleaved
     * {@code ffn_gate_up_exps}, {@code attn_out}, {@code attn_sinks}, {@code ffn_norm}; later ones mix the two).
     */
    static final class Gguf extends TensorNames {
        Gguf() {
            super("token_embd.weight", "output_norm.weight", "output.weight");
        }

        LayerWeights layer(Lookup t, ModelConfig c, int n) {
            String p = "blk." + n + ".";
            Dims d = t.d;
            Qkv qkv = t.has(p + "attn_qkv.weight")
                    ? Qkv.split(
                            t.view(p + "attn_qkv.weight", d.qkv(), d.hidden()), t.view(p + "attn_qkv.bias", d.qkv()), c)
                    : new Qkv(
                            t.view(p + "attn_q.weight", d.q(), d.hidden()),
                            t.view(p + "attn_q.bias", d.q()),
                            t.view(p + "attn_k.weight", d.kv(), d.hidden()),
                            t.view(p + "attn_k.bias", d.kv()),
                            t.view(p + "attn_v.weight", d.kv(), d.hidden()),
                            t.view(p + "attn_v.bias", d.kv()));
            String out = t.has(p + "attn_out.weight") && !t.has(p + "attn_output.weight")
                    ? p + "attn_out"
                    : p + "attn_output";
            GateUp mlp1 = t.has(p + "ffn_gate_up_exps.weight")
                    ? GateUp.split(
                            t.experts(p + "ffn_gate_up_exps.weight", false, d.experts(), d.gateUp(), d.hidden()),
                            t.view(p + "ffn_gate_up_exps.bias", d.experts(), d.gateUp()))
                    : new GateUp(
                            t.experts(p + "ffn_gate_exps.weight", false, d.experts(), d.intermediate(), d.hidden()),
                            t.view(p + "ffn_gate_exps.bias", d.experts(), d.intermediate())
                                    .rowsAsExperts(p + "ffn_gate_exps.bias"),
                            t.experts(p + "ffn_up_exps.weight", false, d.experts(), d.intermediate(), d.hidden()),
                            t.view(p + "ffn_up_exps.bias", d.experts(), d.intermediate())
                                    .rowsAsExperts(p + "ffn_up_exps.bias"));
            return new LayerWeights(
                    t.view(p + "attn_norm.weight", d.hidden()),
                    qkv.q(),
                    qkv.qBias(),
                    qkv.k(),
                    qkv.kBias(),
                    qkv.v(),
                    qkv.vBias(),
                    t.view(t.either(p + "attn_sinks.weight", p + "attn_sinks"), d.heads()),
                    t.view(out + ".weight", d.hidden(), d.q()),
                    t.view(out + ".bias", d.hidden()),
                    t.view(t.either(p + "post_attention_norm.weight", p + "ffn_norm.weight"), d.hidden()),
                    t.view(p + "ffn_gate_inp.weight", d.experts(), d.hidden()),
                    t.view(p + "ffn_gate_inp.bias", d.experts()),
                    mlp1.gate(),
                    mlp1.gateBias(),
                    mlp1.up(),
                    mlp1.upBias(),
                    t.experts(p + "ffn_down_exps.weight", false, d.experts(), d.hidden(), d.intermediate()),
                    t.view(p + "ffn_down_exps.bias", d.experts(), d.hidden()).rowsAsExperts(p + "ffn_down_exps.bias"));
        }
    }
}
