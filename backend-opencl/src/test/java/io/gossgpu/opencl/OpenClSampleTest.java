package io.gossgpu.opencl;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gossgpu.backend.Backend;
import io.gossgpu.backend.BackendProvider;
import io.gossgpu.conformance.BackendConformanceKit;
import io.gossgpu.conformance.SamplingCheck;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * sample.cl against {@link io.gossgpu.backend.TemperatureDraw#draw} on the same logits
 * ({@link SamplingCheck#checkDeviceSampler}). Aborted (not passed) on a device without cl_khr_fp64, where the
 * backend samples on the host.
 */
class OpenClSampleTest {
    @Test
    void deviceSampleEqualsTheHostContract() {
        BackendProvider p = new OpenClConformanceTest().provider();
        BackendConformanceKit.requireAvailable(p);
        try (Backend b = p.create(io.gossgpu.backend.BackendOptions.defaults())) {
            OpenClBackend o = (OpenClBackend) b;
            try (var one = b.allocate(1, 1)) {
                b.write(one, new float[] {0f});
                Assumptions.assumeTrue(
                        o.sampleRow(one, 1, 0.5) >= 0,
                        "this OpenCL device has no cl_khr_fp64: sampling stays on the host");
            }
            int[] n = SamplingCheck.checkDeviceSampler(b, o::sampleRow);
            assertTrue(n[1] * 4 <= n[0], n[1] + " of " + n[0] + " draws differ from the host (boundary draws only)");
            System.out.println("OpenClSampleTest: " + n[0] + " draws, " + n[1]
                    + " boundary draws differ from the host within rounding");
        }
    }
}
