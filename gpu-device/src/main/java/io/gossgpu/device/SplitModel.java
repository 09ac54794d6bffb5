package io.gossgpu.device;

import io.gossgpu.model.LayerWeights;
import io.gossgpu.model.ModelWeights;
import java.util.ArrayList;
import java.util.List;

/**
 * The two halves of a split model, as {@link ModelWeights} whose left-out tensors are null (every backend's upload walk,
 * {@link io.gossgpu.backend.DeviceWeights}, skips a null tensor and counts it as 0 bytes): the GPU's has everything but
 * the experts of the CPU's layers; the CPU's has only those experts and their biases. Views, nothing is copied.
 */
public final class SplitModel {
    private SplitModel() {}

    /** {@code m} without the experts (and expert biases) of the layers {@code plan} puts on the CPU. */
    public static ModelWeights gpuPart(ModelWeights m, ExpertPlan plan) {
        List<LayerWeights> ls = new ArrayList<>(m.layers().size());
        for (int l = 0; l < m.layers().size(); l++) {
            LayerWeights w = m.layers().get(l);
            ls.add(
                    plan.onCpu(l)
                            ? new LayerWeights(
                                    w.attnNorm(),
                                    w.q(),
                                    w.qBias(),
                                    w.k(),
                                    w.kBias(),
                                    w.v(),
                                    w.vBias(),
                                    w.sinks(),
                                    w.out(),
                                    w.outBias(),
                                    w.mlpNorm(),
                                    w.router(),
                                    w.routerBias(),
                                    null,
                                    null,
                                    null,
                                    null,
                                    null,
                                    null)
                            : w);
        }
        return new ModelWeights(m.config(), m.embedding(), List.copyOf(ls), m.finalNorm(), m.unembedding());
    }

    /** Only the experts (and expert biases) of the layers {@code plan} puts on the CPU. */
    public static ModelWeights cpuPart(ModelWeights m, ExpertPlan plan) {
        List<LayerWeights> ls = new ArrayList<>(m.layers().size());
        for (int l = 0; l < m.layers().size(); l++) {
            LayerWeights w = m.layers().get(l);
            ls.add(
                    plan.onCpu(l)
                            ? new LayerWeights(
                                    null,
                                    null,
                                    null,
                                    null,
                                    null,
                                    null,
                                    null,
                                    null,
                                    null,
                                    null,
                                    null,
                                    null,
                                    null,
                                    w.gate(),
                                    w.gateBias(),
                                    w.up(),
                                    w.upBias(),
                                    w.down(),
                                    w.downBias())
                            : new LayerWeights(
                                    null, null, null, null, null, null, null, null, null, null, null, null, null, null,
                                    null, null, null, null, null));
        }
        return new ModelWeights(m.config(), null, java.util.Collections.unmodifiableList(ls), null, null);
    }

    /** Only layer {@code layer}'s experts (and expert biases): what streaming uploads to the GPU for a long step. */
    public static ModelWeights expertsOf(ModelWeights m, int layer) {
        return cpuPart(m, ExpertPlan.layersOnCpu(m.layers().size(), layer));
    }
}
