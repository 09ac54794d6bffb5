package io.gossgpu.model;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.gossgpu.testmodel.TestModelGenerator;
import io.gossgpu.testmodel.TestModelPresets;
import org.junit.jupiter.api.Test;

class ModelWeightsTest {
    @Test
    void originalLayoutMapsFusedAndInterleavedTensorsToCanonicalViews() {
        ModelConfig c = TestModelPresets.tiny();
        try (Checkpoint ckpt = new TestModelGenerator(c, 3).inMemory()) {
            ModelWeights w = ModelWeights.of(ckpt);
            assertEquals(c.numHiddenLayers(), w.layers().size());
            LayerWeights l = w.layers().get(1);
            float[] qkv = WeightView.of(ckpt.tensor("block.1.attn.qkv.weight")).dequantizeAll();
            float[] row = new float[c.hiddenSize()];
            l.k().dequantizeRow(0, 3, row, 0);
            for (int i = 0; i < row.length; i++) assertEquals(qkv[(c.qDim() + 3) * c.hiddenSize() + i], row[i]);
            float[] bias = WeightView.of(ckpt.tensor("block.1.mlp.mlp1_bias")).dequantizeAll();
            float[] up = l.upBias().dequantizeAll();
            // up = odd elements of each expert's interleaved mlp1 bias
            assertEquals(bias[2 * c.intermediateSize() * 2 + 2 * 5 + 1], up[2 * c.intermediateSize() + 5]);
            WeightView mlp1 = WeightView.mxfp4OpenAi(
                    "mlp1",
                    ckpt.tensor("block.1.mlp.mlp1_weight.blocks"),
                    ckpt.tensor("block.1.mlp.mlp1_weight.scales"));
            float[] a = new float[c.hiddenSize()], b = new float[c.hiddenSize()];
            mlp1.dequantizeRow(4, 2 * 7, a, 0);
            l.gate().dequantizeRow(4, 7, b, 0);
            assertEquals(java.util.Arrays.toString(a), java.util.Arrays.toString(b));
        }
    }
}
