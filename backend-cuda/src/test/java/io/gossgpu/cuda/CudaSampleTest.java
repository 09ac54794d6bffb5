package io.gossgpu.cuda;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gossgpu.backend.Backend;
import io.gossgpu.backend.BackendProvider;
import io.gossgpu.conformance.BackendConformanceKit;
import io.gossgpu.conformance.SamplingCheck;
import org.junit.jupiter.api.Test;

/**
 * sample.cu against {@link io.gossgpu.backend.TemperatureDraw#draw} on the same logits, for logit vectors
 * the model cannot produce at will ({@link SamplingCheck#checkDeviceSampler}: 201088 and odd sizes, ties, peaked,
 * flat, underflowing ids; random draws exactly, boundary draws within the rounding bound).
 */
class CudaSampleTest {
    @Test
    void deviceSampleEqualsTheHostContract() {
        BackendProvider p = new CudaConformanceTest().provider();
        BackendConformanceKit.requireAvailable(p);
        try (Backend b = p.create(io.gossgpu.backend.BackendOptions.defaults())) {
            CudaBackend c = (CudaBackend) b;
            int[] n = SamplingCheck.checkDeviceSampler(b, c::sampleRow);
            assertTrue(n[1] * 4 <= n[0], n[1] + " of " + n[0] + " draws differ from the host (boundary draws only)");
            System.out.println("CudaSampleTest: " + n[0] + " draws, " + n[1]
                    + " boundary draws differ from the host within rounding");
        }
    }
}
