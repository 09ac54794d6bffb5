package io.gossgpu.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.gossgpu.forward.OpKind;
import io.gossgpu.model.Checkpoint;
import io.gossgpu.model.LoadOptions;
import io.gossgpu.model.ModelWeights;
import io.gossgpu.testmodel.GgufWriter;
import io.gossgpu.testmodel.TestModelGenerator;
import io.gossgpu.testmodel.TestModelPresets;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link DecodeTraffic} against counts made by hand from the tiny preset's shapes: 3 layers (0 and 2 sliding,
 * window 5), 6 experts of which 4 per token, vocab 1031, hidden 96, intermediate 160, 16 query heads and
 * 2 KV heads of 16 (q 256, kv 32).
 */
class DecodeTrafficTest {
    @TempDir
    Path dir;

    /** KV bytes of a token at position p: sliding layers 0 and 2 attend min(p + 1, 5), layer 1 p + 1; 2 × 32 F32 each. */
    static long kv(int p) {
        return (2L * Math.min(p + 1, 5) + (p + 1)) * 2 * 32 * 4;
    }

    @Test
    void originalLayoutBf16WithOpenAiMxfp4() {
        long layer = 96 * 2 // attention norm, BF16
                + 320 * 96 * 2
                + 320 * 2 // fused QKV matrix and bias
                + 16 * 2 // sinks
                + 96 * 256 * 2
                + 96 * 2 // output projection and bias
                + 96 * 2 // MLP norm
                + 6 * 96 * 2
                + 6 * 2 // router and bias
                + 4
                        * (320 * 48
                                + 320 * 3
                                + 320 * 2 // 4 experts' mlp1: 320 rows of 96 FP4 codes (48 B) + 3 scale bytes; bias
                                + 96 * 80
                                + 96 * 5
                                + 96 * 2); // mlp2: 96 rows of 160 codes (80 B) + 5 scale bytes; bias
        long weights =
                3 * layer + 96 * 2 /* one embedding row */ + 96 * 2 /* final norm */ + 1031L * 96 * 2 /* unembedding */;
        assertEquals(841_092, weights); // the hand count above, added up
        try (Checkpoint ck = new TestModelGenerator(TestModelPresets.tiny(), 3).inMemory()) {
            ModelWeights w = ModelWeights.of(ck);
            assertEquals(weights + kv(0), DecodeTraffic.bytesPerToken(w, 0));
            assertEquals(weights + kv(10), DecodeTraffic.bytesPerToken(w, 10));
            assertEquals(weights + 21 * 256, DecodeTraffic.bytesPerToken(w, 10));
            // a run of 4 tokens from position 8: positions 8..11, the full layer grows by 256 B per step
            assertEquals(weights + (kv(8) + kv(9) + kv(10) + kv(11)) / 4, DecodeTraffic.meanBytesPerToken(w, 8, 4));
            // op by op (bench --op-times), each summed over the 3 layers
            assertEquals(96 * 2, DecodeTraffic.bytesPerToken(w, null, 10, OpKind.EMBED));
            assertEquals(3 * (320 * 96 * 2 + 320 * 2), DecodeTraffic.bytesPerToken(w, null, 10, OpKind.QKV_ROPE));
            assertEquals(3 * 16 * 2 + kv(10), DecodeTraffic.bytesPerToken(w, null, 10, OpKind.ATTENTION));
            assertEquals(
                    3 * 4 * (320 * 48 + 320 * 3 + 320 * 2 + 96 * 80 + 96 * 5 + 96 * 2),
                    DecodeTraffic.bytesPerToken(w, null, 10, OpKind.MOE));
            assertEquals(1031L * 96 * 2, DecodeTraffic.bytesPerToken(w, null, 10, OpKind.LOGITS));
            assertEquals(0, DecodeTraffic.bytesPerToken(w, null, 10, OpKind.MOE_RESIDUAL));
            long sum = 0;
            for (OpKind op : OpKind.values()) sum += DecodeTraffic.bytesPerToken(w, null, 10, op);
            assertEquals(DecodeTraffic.bytesPerToken(w, 10), sum);
            // as the native cpu kernels hold them: Q, K, V, output and unembedding quantized to Q8_0 (34 B per 32
            // values)
            if (io.gossgpu.cpu.matmul.NativeCpu.unavailableReason() == null)
                try (io.gossgpu.backend.Backend cpu = new io.gossgpu.cpu.CpuBackendProvider()
                                .create(io.gossgpu.backend.BackendOptions.defaults());
                        io.gossgpu.backend.LoadedWeights held = cpu.loadWeights(w)) {
                    assertEquals(
                            3 * (320 * 3 * 34 + 320 * 2), DecodeTraffic.bytesPerToken(w, held, 10, OpKind.QKV_ROPE));
                    assertEquals(1031L * 3 * 34, DecodeTraffic.bytesPerToken(w, held, 10, OpKind.LOGITS));
                    assertEquals(
                            DecodeTraffic.bytesPerToken(w, null, 10, OpKind.MOE),
                            DecodeTraffic.bytesPerToken(w, held, 10, OpKind.MOE),
                            "experts: tiles of the file's size");
                    assertEquals(
                            DecodeTraffic.bytesPerToken(w, null, 10, OpKind.ROUTER),
                            DecodeTraffic.bytesPerToken(w, held, 10, OpKind.ROUTER),
                            "the routers stay float");
                }
        }
    }

    @Test
    void ggufQ8DenseWithGgmlMxfp4AsTheLlamaCppReleases() {
        Path file = dir.resolve("tiny.gguf");
        GgufWriter.write(
                new TestModelGenerator(TestModelPresets.tiny(), 3),
                file,
                GgufWriter.Options.defaults().withDense(GgufWriter.DenseType.Q8_0));
        long layer = 96 * 4 // attention norm, F32
                + (256 + 32 + 32) * (3 * 34)
                + (256 + 32 + 32) * 4 // Q, K, V in Q8_0 (3 blocks of 34 B per row), F32 biases
                + 16 * 4 // sinks
                + 96 * (8 * 34)
                + 96 * 4 // output projection: 8 blocks per row; bias
                + 96 * 4 // MLP norm
                + 6 * 96 * 4
                + 6 * 4 // router stays F32, bias
                + 4
                        * (2 * (160 * 3 * 17 + 160 * 4) // 4 experts: gate and up, 160 rows of 3 MXFP4 blocks (17
                                // B), F32 biases
                                + 96 * 5 * 17
                                + 96 * 4); // down: 96 rows of 5 blocks; bias
        long weights = 3 * layer
                + 3 * 34 /* one Q8_0 embedding row */
                + 96 * 4 /* final norm */
                + 1031L * 3 * 34 /* unembedding */;
        assertEquals(610_104, weights);
        try (Checkpoint ck = Checkpoint.open(file, LoadOptions.defaults())) {
            ModelWeights w = ModelWeights.of(ck);
            assertEquals(weights + kv(3), DecodeTraffic.bytesPerToken(w, 3));
            assertEquals(weights + kv(100), DecodeTraffic.bytesPerToken(w, 100));
            // the MoE in two (bench --op-times): gate and up, then down, of the 4 active experts in each of the 3
            // layers
            long gateUp = 3 * 4 * 2 * (160 * 3 * 17 + 160 * 4), down = 3 * 4 * (96 * 5 * 17 + 96 * 4);
            assertEquals(gateUp, DecodeTraffic.moeBytesPerToken(w, null, true));
            assertEquals(down, DecodeTraffic.moeBytesPerToken(w, null, false));
            assertEquals(DecodeTraffic.bytesPerToken(w, null, 0, OpKind.MOE), gateUp + down);
        }
    }
}
