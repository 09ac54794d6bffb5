package io.gossgpu.cuda;

import io.gossgpu.backend.Backend;
import io.gossgpu.backend.BackendProvider;
import io.gossgpu.backend.DeviceTensor;
import io.gossgpu.conformance.BackendConformanceKit;
import io.gossgpu.conformance.SamplingCheck;
import io.gossgpu.generate.Sampler;
import org.junit.jupiter.api.Test;

import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * sample.cu against {@link Sampler#sampleTemperature} on the same logits, for logit vectors the model cannot
 * produce at will: gpt-oss's vocabulary (201088) and odd sizes around the chunk size, ties, very peaked, very
 * flat, and ids whose probability underflows to zero; temperatures 0.3, 1, 2; draws near 0, near 1, random and
 * exactly on host cumulative boundaries. Equal ids, or a difference {@link SamplingCheck} proves is rounding.
 */
class CudaSampleTest {
    static float[] logits(String kind, int n, SplittableRandom r) {
        float[] l = new float[n];
        for (int i = 0; i < n; i++) {
            l[i] = switch (kind) {
                case "gaussian" -> (float) (r.nextGaussian() * 3);
                case "ties" -> r.nextInt(3); // many equal logits: equal e_j
                case "peaked" -> i == n / 3 ? 40f : (float) r.nextGaussian();
                case "flat" -> (float) (r.nextGaussian() * 1e-3);
                case "holes" -> r.nextInt(4) == 0 ? -1e5f : (float) r.nextGaussian(); // e_j = 0 for a quarter of the ids
                default -> throw new IllegalArgumentException(kind);
            };
        }
        return l;
    }

    @Test
    void deviceSampleEqualsTheHostContract() {
        BackendProvider p = new CudaConformanceTest().provider();
        BackendConformanceKit.requireAvailable(p);
        SplittableRandom r = new SplittableRandom(17);
        int checked = 0, differing = 0;
        try (Backend b = p.create()) {
            CudaBackend c = (CudaBackend) b;
            for (int n : new int[]{201088, 1, 2, 7, 255, 2047, 2048, 2049, 6145, 100003}) {
                for (String kind : new String[]{"gaussian", "ties", "peaked", "flat", "holes"}) {
                    float[] l = logits(kind, n, r);
                    try (DeviceTensor t = b.allocate(1, n)) {
                        b.write(t, l);
                        for (double temperature : new double[]{0.3, 1, 2}) {
                            for (int k = 0; k < 4; k++) { // random draws: on a boundary with probability ~V·2^-52, so exactly equal
                                double u = r.nextDouble();
                                assertEquals(Sampler.sampleTemperature(l, 0, n, temperature, u), c.sampleRow(t, temperature, u),
                                        kind + " n=" + n + " T=" + temperature + " u=" + u);
                            }
                            for (double u : SamplingCheck.draws(l, 0, n, temperature, r, n > 10000 ? 3 : 6)) {
                                int got = c.sampleRow(t, temperature, u);
                                SamplingCheck.assertSameDraw(kind + " n=" + n, l, 0, n, temperature, u, got);
                                checked++;
                                if (got != Sampler.sampleTemperature(l, 0, n, temperature, u)) {
                                    differing++;
                                }
                            }
                        }
                    }
                }
            }
        }
        // differences are allowed only on boundaries (SamplingCheck); random draws land on one with probability ~1e-11
        assertTrue(differing * 4 <= checked, differing + " of " + checked + " draws differ from the host (boundary draws only)");
        System.out.println("CudaSampleTest: " + checked + " draws, " + differing + " differ from the host within rounding of a boundary");
    }
}
