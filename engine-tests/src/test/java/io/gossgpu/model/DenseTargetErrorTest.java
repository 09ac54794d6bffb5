package io.gossgpu.model;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gossgpu.quant.F16;
import io.gossgpu.quant.Q8_0;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * Why {@link DenseDecode} turns the dense types Q8_0 cannot hold exactly into F16: on the K-quant tensors of the
 * llama-quantize fixtures, the error each candidate adds to the exactly decoded values, as RMS relative to the
 * values' RMS. F16 costs 2 bytes a value, Q8_0 1.06; F16 adds far less (printed per type).
 */
class DenseTargetErrorTest {
    @Test
    void f16AddsFarLessErrorThanRequantizingToQ8_0() throws Exception {
        Map<String, double[]> byType = new TreeMap<>(); // type -> {sum v², sum f16 err², sum q8 err²}
        for (String f : new String[] {"Q4_K_M", "Q6_K", "Q2_K"}) {
            Path file = Path.of(getClass()
                    .getResource("/llama-quantize/quant-" + f + ".gguf")
                    .toURI());
            try (Checkpoint c = Checkpoint.open(file, LoadOptions.defaults())) {
                for (TensorData t : c.tensors().values()) {
                    if (!Conversions.needsDecode(t.dtype())
                            || DenseDecode.target(t.dtype(), false) != io.gossgpu.model.DType.F16) continue;
                    int cols = (int) t.dim(t.rank() - 1);
                    long rows = t.elements() / cols, rowBytes = t.dtype().rowBytes(cols);
                    float[] row = new float[cols], q8 = new float[cols];
                    double[] acc = byType.computeIfAbsent(t.dtype().toString(), k -> new double[3]);
                    for (long r = 0; r < rows; r++) {
                        BlockDecoder.of(t.dtype()).decodeRow(t.bytes(), r * rowBytes, cols, row, 0);
                        Q8_0.decodeRow(MemorySegment.ofArray(Q8_0.quantizeRow(row, 0, cols)), 0, cols, q8, 0);
                        for (int i = 0; i < cols; i++) {
                            double e16 = row[i] - F16.toFloat(F16.fromFloat(row[i])), e8 = row[i] - q8[i];
                            acc[0] += row[i] * (double) row[i];
                            acc[1] += e16 * e16;
                            acc[2] += e8 * e8;
                        }
                    }
                }
            }
        }
        assertTrue(
                byType.keySet().containsAll(java.util.List.of("Q2_K", "Q3_K", "Q4_K", "Q6_K")),
                byType.keySet().toString());
        byType.forEach((type, a) -> {
            double f16 = Math.sqrt(a[1] / a[0]), q8 = Math.sqrt(a[2] / a[0]);
            System.out.printf(
                    "%s decoded: F16 adds %.2e, Q8_0 adds %.2e relative RMS error (%.0fx)%n", type, f16, q8, q8 / f16);
            assertTrue(f16 < 3e-4, type + " F16 " + f16);
            assertTrue(q8 > 10 * f16, type + ": Q8_0 " + q8 + " vs F16 " + f16);
        });
    }
}
