package io.gossgpu.testmodel;

import io.gossgpu.model.ModelConfig;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * How OpenAI's original/ tensors become Hugging Face transformers tensors: renamed, and the fused QKV
 * weight and bias split along their first dimension into q_proj (rows [0, qDim)), k_proj (the next
 * kvDim rows) and v_proj (the last kvDim rows). MXFP4 experts keep their bytes and shapes
 * ({@code gate_up_proj_blocks} is [E, 2I, H/32, 16], gate and up rows still interleaved).
 */
public final class HfTensorLayout {
    private HfTensorLayout() {}

    /**
     * One HF tensor: rows {@code [firstRow, firstRow + shape[0])} of original tensor {@code source}
     * (all of it when the shapes agree).
     */
    public record Part(String name, TensorSpec source, long firstRow, long[] shape) {
        /** Bytes of one step along the first dimension of the source. */
        long sourceRowBytes() {
            long[] s = source.shape();
            long n = 1;
            for (int i = 1; i < s.length; i++) n *= s[i];
            return n * source.dtype().blockBytes();
        }

        public long byteOffset() {
            return firstRow * sourceRowBytes();
        }

        @Override
        public String toString() {
            return name + " <- " + source.name() + "[" + firstRow + "..] " + Arrays.toString(shape);
        }
    }

    public static List<Part> of(ModelConfig c, List<TensorSpec> original) {
        List<Part> out = new ArrayList<>();
        for (TensorSpec t : original) {
            String n = t.name();
            if (n.equals("embedding.weight")) out.add(whole("model.embed_tokens.weight", t));
            else if (n.equals("norm.scale")) out.add(whole("model.norm.weight", t));
            else if (n.equals("unembedding.weight")) out.add(whole("lm_head.weight", t));
            else if (n.startsWith("block.")) {
                int dot = n.indexOf('.', 6);
                String layer = n.substring(6, dot), rest = n.substring(dot + 1);
                String p = "model.layers." + layer + ".";
                switch (rest) {
                    case "attn.qkv.weight", "attn.qkv.bias" -> {
                        String kind = rest.endsWith("weight") ? "weight" : "bias";
                        out.add(rows(p + "self_attn.q_proj." + kind, t, 0, c.qDim()));
                        out.add(rows(p + "self_attn.k_proj." + kind, t, c.qDim(), c.kvDim()));
                        out.add(rows(p + "self_attn.v_proj." + kind, t, c.qDim() + c.kvDim(), c.kvDim()));
                    }
                    default -> out.add(whole(p + rename(n, rest), t));
                }
            } else {
                throw new IllegalArgumentException("no Hugging Face name for tensor " + n);
            }
        }
        return out;
    }

    private static String rename(String full, String rest) {
        return switch (rest) {
            case "attn.norm.scale" -> "input_layernorm.weight";
            case "attn.sinks" -> "self_attn.sinks";
            case "attn.out.weight" -> "self_attn.o_proj.weight";
            case "attn.out.bias" -> "self_attn.o_proj.bias";
            case "mlp.norm.scale" -> "post_attention_layernorm.weight";
            case "mlp.gate.weight" -> "mlp.router.weight";
            case "mlp.gate.bias" -> "mlp.router.bias";
            case "mlp.mlp1_weight.blocks" -> "mlp.experts.gate_up_proj_blocks";
            case "mlp.mlp1_weight.scales" -> "mlp.experts.gate_up_proj_scales";
            case "mlp.mlp1_bias" -> "mlp.experts.gate_up_proj_bias";
            case "mlp.mlp2_weight.blocks" -> "mlp.experts.down_proj_blocks";
            case "mlp.mlp2_weight.scales" -> "mlp.experts.down_proj_scales";
            case "mlp.mlp2_bias" -> "mlp.experts.down_proj_bias";
            default -> throw new IllegalArgumentException("no Hugging Face name for tensor " + full);
        };
    }

    private static Part whole(String name, TensorSpec t) {
        return new Part(name, t, 0, t.shape().clone());
    }

    private static Part rows(String name, TensorSpec t, long first, long count) {
        long[] shape = t.shape().clone();
        shape[0] = count;
        return new Part(name, t, first, shape);
    }
}
