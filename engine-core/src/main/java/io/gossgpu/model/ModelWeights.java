package io.gossgpu.model;

import java.nio.file.Path;
import java.util.List;

/**
 * A model's weights in canonical form ({@link LayerWeights} per block), built from any checkpoint
 * layout by {@link TensorNames}. Views read the checkpoint's bytes in place; the checkpoint must
 * stay open while the weights are used.
 */
public record ModelWeights(ModelConfig config, WeightView embedding, List<LayerWeights> layers,
                           WeightView finalNorm, WeightView unembedding) {

    /** Maps {@code checkpoint}'s tensors to canonical weights and checks every shape against the config. */
    public static ModelWeights of(Checkpoint checkpoint) {
        ModelWeights w = TensorNames.forFormat(checkpoint.format()).map(checkpoint);
        w.checkShapes(checkpoint.path());
        return w;
    }

    private void checkShapes(Path file) {
        ModelConfig c = config;
        int h = c.hiddenSize(), e = c.numExperts(), i = c.intermediateSize();
        expect(file, embedding, 1, c.vocabSize(), h);
        expect(file, finalNorm, 1, 1, h);
        expect(file, unembedding, 1, c.vocabSize(), h);
        for (LayerWeights l : layers) {
            expect(file, l.attnNorm(), 1, 1, h);
            expect(file, l.q(), 1, c.qDim(), h);
            expect(file, l.qBias(), 1, 1, c.qDim());
            expect(file, l.k(), 1, c.kvDim(), h);
            expect(file, l.kBias(), 1, 1, c.kvDim());
            expect(file, l.v(), 1, c.kvDim(), h);
            expect(file, l.vBias(), 1, 1, c.kvDim());
            expect(file, l.sinks(), 1, 1, c.numAttentionHeads());
            expect(file, l.out(), 1, h, c.qDim());
            expect(file, l.outBias(), 1, 1, h);
            expect(file, l.mlpNorm(), 1, 1, h);
            expect(file, l.router(), 1, e, h);
            expect(file, l.routerBias(), 1, 1, e);
            expect(file, l.gate(), e, i, h);
            expect(file, l.gateBias(), e, 1, i);
            expect(file, l.up(), e, i, h);
            expect(file, l.upBias(), e, 1, i);
            expect(file, l.down(), e, h, i);
            expect(file, l.downBias(), e, 1, h);
        }
    }

    private static void expect(Path file, WeightView w, int experts, int rows, int cols) {
        if (w.experts() != experts || w.rows() != rows || w.cols() != cols)
            throw new ModelFormatException(file, w.name(), "shape " + shape(w.experts(), w.rows(), w.cols())
                    + " disagrees with the config, which needs " + shape(experts, rows, cols));
    }

    private static String shape(int experts, int rows, int cols) {
        return experts == 1 ? (rows == 1 ? "[" + cols + "]" : "[" + rows + ", " + cols + "]")
                : "[" + experts + ", " + rows + ", " + cols + "]";
    }
}
