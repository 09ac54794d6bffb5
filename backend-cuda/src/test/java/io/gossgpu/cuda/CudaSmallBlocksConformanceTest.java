package io.gossgpu.cuda;

import io.gossgpu.backend.BackendOptions;
import org.junit.jupiter.api.Test;

/**
 * The whole conformance kit again with every block at its smallest (32 threads) and DENSE at 96, and the
 * smallest GEMM tile (32 tokens × 64 rows) from 2 tokens on (the default kit takes the matvec up to 8): attention
 * keys in chunks of 32 (more online-softmax rescalings than the test sequences have with the default 128),
 * one or three warps per linear block (a partial last block), MXFP4 rows split over fewer threads, and the
 * MoE batched by expert from T = 2 (the default kit takes it from T = 4: its batches of 17 and whole-model prefills),
 * and attention always with the plain kernel (the default kit takes attention_gqa for every batch, decode steps with
 * their keys split over 32 blocks per KV head).
 * Skipped like {@link CudaConformanceTest}.
 */
class CudaSmallBlocksConformanceTest extends CudaConformanceTest {
    static final BackendOptions KNOBS = BackendOptions.defaults()
            .with(CudaKnobs.DENSE, 96)
            .with(CudaKnobs.DENSE_PREFILL_MIN_T, 2)
            .with(CudaKnobs.DENSE_TILE_T, 32)
            .with(CudaKnobs.RMSNORM, 32)
            .with(CudaKnobs.ATTENTION, 32)
            .with(CudaKnobs.MOE, 32)
            .with(CudaKnobs.ARGMAX, 32)
            .with(CudaKnobs.ELEMENTWISE, 32)
            .with(CudaKnobs.MOE_PREFILL_MIN_T, 2)
            .with(CudaKnobs.ATTENTION_PREFILL_MIN_T, 1000000)
            .with(CudaKnobs.ATTENTION_SPLITS, 0);

    @Override
    protected BackendOptions options() {
        return KNOBS;
    }

    /** Under the fake driver the demo model's prefix runs once, in {@link CudaConformanceTest} (default knobs). */
    @Override
    protected boolean runsEmulatedDemo() {
        return false;
    }

    @Test
    void theKnobsAreApplied() {
        assertOptionsInEffect(((CudaBackend) backend).knobs());
    }
}
