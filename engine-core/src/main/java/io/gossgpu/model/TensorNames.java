package io.gossgpu.model;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * The tensor names of each checkpoint layout, mapped to {@link ModelWeights}. Every tensor the
 * layout needs must be present, and every tensor in the file must be one the layout knows:
 * either is a {@link ModelFormatException} naming the tensor.
 */
abstract class TensorNames {

    static TensorNames forFormat(ModelFormat format) {
        return switch (format) {
            case ORIGINAL -> new Original();
            case HF -> new HuggingFace();
            case GGUF -> new Gguf();
        };
    }

    /** Builds the weights, recording which tensors were used. */
    final ModelWeights map(Checkpoint ckpt) {
        Lookup t = new Lookup(ckpt);
        ModelConfig c = ckpt.config();
        // Every layer has more than one tensor: a larger count is corrupt (and must not size the list below).
        if (c.numHiddenLayers() > ckpt.tensors().size())
            throw new ModelFormatException(ckpt.path(), "the config's " + c.numHiddenLayers() + " layers cannot fit in the "
                    + ckpt.tensors().size() + " tensors the model holds (num_hidden_layers / block_count is corrupt)");
        List<LayerWeights> layers = new ArrayList<>(c.numHiddenLayers());
        for (int n = 0; n < c.numHiddenLayers(); n++) layers.add(layer(t, c, n));
        ModelWeights w = new ModelWeights(c, embedding(t), List.copyOf(layers), finalNorm(t), unembedding(t));
        t.rejectUnused();
        return w;
    }

    abstract WeightView embedding(Lookup t);

    abstract WeightView finalNorm(Lookup t);

    abstract WeightView unembedding(Lookup t);

    abstract LayerWeights layer(Lookup t, ModelConfig c, int n);

    /** Name lookups against one checkpoint that remember what was asked for. */
    static final class Lookup {
        private final Checkpoint ckpt;
        private final Set<String> used = new HashSet<>();

        Lookup(Checkpoint ckpt) {
            this.ckpt = ckpt;
        }

        TensorData tensor(String name) {
            used.add(name);
            return ckpt.tensor(name);
        }

        WeightView view(String name) {
            return WeightView.of(tensor(name));
        }

        WeightView mxfp4(String name, String codes, String scales) {
            return WeightView.mxfp4OpenAi(name, tensor(codes), tensor(scales));
        }

        void rejectUnused() {
            Set<String> extra = new TreeSet<>(ckpt.tensors().keySet());
            extra.removeAll(used);
            if (!extra.isEmpty())
                throw new ModelFormatException(ckpt.path(), extra.iterator().next(),
                        "unexpected tensor for a gpt-oss model (" + extra.size() + " unexpected in all)");
        }
    }

    /** OpenAI's original/ layout: fused QKV, row-interleaved mlp1 (gate, linear, gate, linear, …). */
    static final class Original extends TensorNames {
        WeightView embedding(Lookup t) { return t.view("embedding.weight"); }

        WeightView finalNorm(Lookup t) { return t.view("norm.scale"); }

        WeightView unembedding(Lookup t) { return t.view("unembedding.weight"); }

        LayerWeights layer(Lookup t, ModelConfig c, int n) {
            String p = "block." + n + ".";
            WeightView qkv = t.view(p + "attn.qkv.weight"), qkvBias = t.view(p + "attn.qkv.bias");
            int q = c.qDim(), kv = c.kvDim();
            WeightView mlp1 = t.mxfp4(p + "mlp.mlp1_weight", p + "mlp.mlp1_weight.blocks", p + "mlp.mlp1_weight.scales");
            WeightView mlp1Bias = t.view(p + "mlp.mlp1_bias").rowsAsExperts(p + "mlp.mlp1_bias");
            return new LayerWeights(
                    t.view(p + "attn.norm.scale"),
                    qkv.sliceRows(p + "attn.qkv.weight[q]", 0, q), qkvBias.sliceCols(p + "attn.qkv.bias[q]", 0, q),
                    qkv.sliceRows(p + "attn.qkv.weight[k]", q, kv), qkvBias.sliceCols(p + "attn.qkv.bias[k]", q, kv),
                    qkv.sliceRows(p + "attn.qkv.weight[v]", q + kv, kv), qkvBias.sliceCols(p + "attn.qkv.bias[v]", q + kv, kv),
                    t.view(p + "attn.sinks"),
                    t.view(p + "attn.out.weight"), t.view(p + "attn.out.bias"),
                    t.view(p + "mlp.norm.scale"),
                    t.view(p + "mlp.gate.weight"), t.view(p + "mlp.gate.bias"),
                    mlp1.everyOtherRow(p + "mlp.mlp1_weight[gate]", 0), mlp1Bias.everyOtherCol(p + "mlp.mlp1_bias[gate]", 0),
                    mlp1.everyOtherRow(p + "mlp.mlp1_weight[up]", 1), mlp1Bias.everyOtherCol(p + "mlp.mlp1_bias[up]", 1),
                    t.mxfp4(p + "mlp.mlp2_weight", p + "mlp.mlp2_weight.blocks", p + "mlp.mlp2_weight.scales"),
                    t.view(p + "mlp.mlp2_bias").rowsAsExperts(p + "mlp.mlp2_bias"));
        }
    }

    /** Hugging Face transformers layout: separate q/k/v, gate_up_proj interleaved like OpenAI's mlp1. */
    static final class HuggingFace extends TensorNames {
        WeightView embedding(Lookup t) { return t.view("model.embed_tokens.weight"); }

        WeightView finalNorm(Lookup t) { return t.view("model.norm.weight"); }

        WeightView unembedding(Lookup t) { return t.view("lm_head.weight"); }

        LayerWeights layer(Lookup t, ModelConfig c, int n) {
            String p = "model.layers." + n + ".";
            String x = p + "mlp.experts.";
            WeightView gateUp = t.mxfp4(x + "gate_up_proj", x + "gate_up_proj_blocks", x + "gate_up_proj_scales");
            WeightView gateUpBias = t.view(x + "gate_up_proj_bias").rowsAsExperts(x + "gate_up_proj_bias");
            return new LayerWeights(
                    t.view(p + "input_layernorm.weight"),
                    t.view(p + "self_attn.q_proj.weight"), t.view(p + "self_attn.q_proj.bias"),
                    t.view(p + "self_attn.k_proj.weight"), t.view(p + "self_attn.k_proj.bias"),
                    t.view(p + "self_attn.v_proj.weight"), t.view(p + "self_attn.v_proj.bias"),
                    t.view(p + "self_attn.sinks"),
                    t.view(p + "self_attn.o_proj.weight"), t.view(p + "self_attn.o_proj.bias"),
                    t.view(p + "post_attention_layernorm.weight"),
                    t.view(p + "mlp.router.weight"), t.view(p + "mlp.router.bias"),
                    gateUp.everyOtherRow(x + "gate_up_proj[gate]", 0), gateUpBias.everyOtherCol(x + "gate_up_proj_bias[gate]", 0),
                    gateUp.everyOtherRow(x + "gate_up_proj[up]", 1), gateUpBias.everyOtherCol(x + "gate_up_proj_bias[up]", 1),
                    t.mxfp4(x + "down_proj", x + "down_proj_blocks", x + "down_proj_scales"),
                    t.view(x + "down_proj_bias").rowsAsExperts(x + "down_proj_bias"));
        }
    }

    /** llama.cpp's GGUF names for architecture "gpt-oss": gate and up experts already split. */
    static final class Gguf extends TensorNames {
        WeightView embedding(Lookup t) { return t.view("token_embd.weight"); }

        WeightView finalNorm(Lookup t) { return t.view("output_norm.weight"); }

        WeightView unembedding(Lookup t) { return t.view("output.weight"); }

        LayerWeights layer(Lookup t, ModelConfig c, int n) {
            String p = "blk." + n + ".";
            return new LayerWeights(
                    t.view(p + "attn_norm.weight"),
                    t.view(p + "attn_q.weight"), t.view(p + "attn_q.bias"),
                    t.view(p + "attn_k.weight"), t.view(p + "attn_k.bias"),
                    t.view(p + "attn_v.weight"), t.view(p + "attn_v.bias"),
                    t.view(p + "attn_sinks.weight"),
                    t.view(p + "attn_output.weight"), t.view(p + "attn_output.bias"),
                    t.view(p + "post_attention_norm.weight"),
                    t.view(p + "ffn_gate_inp.weight"), t.view(p + "ffn_gate_inp.bias"),
                    t.view(p + "ffn_gate_exps.weight"), t.view(p + "ffn_gate_exps.bias").rowsAsExperts(p + "ffn_gate_exps.bias"),
                    t.view(p + "ffn_up_exps.weight"), t.view(p + "ffn_up_exps.bias").rowsAsExperts(p + "ffn_up_exps.bias"),
                    t.view(p + "ffn_down_exps.weight"), t.view(p + "ffn_down_exps.bias").rowsAsExperts(p + "ffn_down_exps.bias"));
        }
    }
}
