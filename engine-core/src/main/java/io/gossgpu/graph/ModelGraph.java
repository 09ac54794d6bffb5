package io.gossgpu.graph;

import io.gossgpu.model.ModelConfig;

import java.util.ArrayList;
import java.util.List;

/**
 * The gpt-oss op graph, built once from the config: EMBED; per layer ATTN_NORM, QKV_ROPE, ATTENTION,
 * ATTN_OUT, ATTN_RESIDUAL, MLP_NORM, ROUTER, MOE, MOE_RESIDUAL; FINAL_NORM; LOGITS. Weights are named
 * by (layer, kind) and resolved by the backend's {@link io.gossgpu.backend.LoadedWeights}.
 */
public record ModelGraph(ModelConfig config, List<GraphOp> ops) {
    public ModelGraph {
        ops = List.copyOf(ops);
    }

    public static ModelGraph build(ModelConfig c) {
        List<GraphOp> ops = new ArrayList<>();
        ops.add(new GraphOp(OpKind.EMBED, -1));
        OpKind[] layerOps = {OpKind.ATTN_NORM, OpKind.QKV_ROPE, OpKind.ATTENTION, OpKind.ATTN_OUT, OpKind.ATTN_RESIDUAL,
                OpKind.MLP_NORM, OpKind.ROUTER, OpKind.MOE, OpKind.MOE_RESIDUAL};
        for (int l = 0; l < c.numHiddenLayers(); l++) for (OpKind k : layerOps) ops.add(new GraphOp(k, l));
        ops.add(new GraphOp(OpKind.FINAL_NORM, -1));
        ops.add(new GraphOp(OpKind.LOGITS, -1));
        return new ModelGraph(c, ops);
    }
}
