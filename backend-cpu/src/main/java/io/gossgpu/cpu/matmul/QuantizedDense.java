package io.gossgpu.cpu.matmul;

import io.gossgpu.model.LayerWeights;
import io.gossgpu.model.ModelWeights;
import io.gossgpu.model.WeightFormat;
import io.gossgpu.model.WeightView;
import io.gossgpu.quant.Q8_0;
import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * A model's weights with every float dense matrix that a cpu kernel set quantizes at load
 * ({@link KernelSet#quantizesDense(WeightView, ModelWeights)}) replaced by its Q8_0, as {@link Q8_0#quantizeRow} writes
 * a GGUF. The kernels' tiles are those bits exactly (NativeKernelsTest), so the reference backend on these weights
 * computes what the cpu backend computes on the originals, less the rounding of its int8 activations: the comparison
 * then budgets that rounding alone, as it does for the experts, and not the weights' quantization, which is the
 * choice {@code GOSS_CPU_DENSE=q8} makes (the ggml-org release's precision).
 */
public final class QuantizedDense {
    private QuantizedDense() {}

    public static ModelWeights of(ModelWeights m, KernelSet kernels) {
        List<LayerWeights> layers = m.layers().stream()
                .map(l -> new LayerWeights(
                        l.attnNorm(),
                        q8(l.q(), m, kernels),
                        l.qBias(),
                        q8(l.k(), m, kernels),
                        l.kBias(),
                        q8(l.v(), m, kernels),
                        l.vBias(),
                        l.sinks(),
                        q8(l.out(), m, kernels),
                        l.outBias(),
                        l.mlpNorm(),
                        q8(l.router(), m, kernels),
                        l.routerBias(),
                        l.gate(),
                        l.gateBias(),
                        l.up(),
                        l.upBias(),
                        l.down(),
                        l.downBias()))
                .toList();
        WeightView unembedding = m.unembedding() == m.embedding() ? m.unembedding() : q8(m.unembedding(), m, kernels);
        return new ModelWeights(m.config(), m.embedding(), layers, m.finalNorm(), unembedding);
    }

    /** {@code v} as an in-memory Q8_0 view when the kernels quantize it, else {@code v}. */
    private static WeightView q8(WeightView v, ModelWeights m, KernelSet kernels) {
        if (!kernels.quantizesDense(v, m)) return v;
        long rowBytes = WeightFormat.Q8_0.rowBytes(v.cols());
        byte[] bytes = new byte[Math.toIntExact(v.experts() * v.rows() * rowBytes)];
        float[] row = new float[v.cols()];
        for (int e = 0; e < v.experts(); e++)
            for (int r = 0; r < v.rows(); r++) {
                v.dequantizeRow(e, r, row, 0);
                System.arraycopy(
                        Q8_0.quantizeRow(row, 0, v.cols()),
                        0,
                        bytes,
                        Math.toIntExact(((long) e * v.rows() + r) * rowBytes),
                        (int) rowBytes);
            }
        return new WeightView(
                v.name(),
                WeightFormat.Q8_0,
                v.experts(),
                v.rows(),
                v.cols(),
                MemorySegment.ofArray(bytes),
                0,
                v.rows() * rowBytes,
                rowBytes,
                1,
                null,
                0,
                0,
                0);
    }
}
