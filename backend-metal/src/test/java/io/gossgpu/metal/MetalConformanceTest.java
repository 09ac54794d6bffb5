package io.gossgpu.metal;

import io.gossgpu.backend.BackendProvider;
import io.gossgpu.backend.Routing;
import io.gossgpu.conformance.BackendConformanceKit;
import io.gossgpu.conformance.OpRuns;
import io.gossgpu.model.ModelConfig;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The conformance kit on the Metal backend: on Linux against the emulated Metal device (the build sets
 * GOSS_METAL_EMULATOR=1 for tests), on macOS against the real GPU. One extra test: the kit checks the
 * SwiGLU clamps at T=3, which the decode kernels serve; this repeats it at T=17 for the tiled prefill path.
 */
class MetalConformanceTest extends BackendConformanceKit {
    @Override
    protected boolean requiresFusedAddRmsNorm() {
        return true;
    }

    @Override
    protected BackendProvider provider() {
        return new MetalBackendProvider();
    }

    /** The emulated device: GOSS_METAL_EMULATOR, which the build sets on Linux. */
    @Override
    protected boolean onEmulatedDevice() {
        return System.getenv("GOSS_METAL_EMULATOR") != null;
    }

    @Test
    void moeClampsInThePrefillPath() {
        for (String shape : new String[] {"tiny", "odd", "wide"}) {
            Model m = model(shape);
            ModelConfig c = m.config();
            int T = 17, k = c.expertsPerToken();
            SplittableRandom r = new SplittableRandom(78);
            float[] x = new float[T * c.hiddenSize()];
            for (int i = 0; i < x.length; i++) x[i] = (float) (r.nextGaussian() * 30);
            int h = c.hiddenSize();
            Routing want = OpRuns.routing(reference, m.ref(), 1, x, T, h, k);
            assertClose(
                    "moe (prefill) with clamped activations, " + shape,
                    OpRuns.moe(reference, m.ref(), 1, x, T, h, want),
                    OpRuns.moe(backend, m.mine(), 1, x, T, h, want),
                    T,
                    h,
                    opTolerance());
        }
    }
}
