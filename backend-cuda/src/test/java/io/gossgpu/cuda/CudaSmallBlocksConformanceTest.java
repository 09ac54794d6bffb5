package io.gossgpu.cuda;

import io.gossgpu.backend.BackendProvider;

import java.util.Map;

/**
 * The whole conformance kit again with every block at its smallest (32 threads) and LINEAR at 96, and the
 * smallest GEMM tile (32 tokens × 64 rows) from 2 tokens on (the default kit takes the matvec up to 8): attention
 * keys in chunks of 32 (more online-softmax rescalings than the test sequences have with the default 128),
 * one or three warps per linear block (a partial last block), MXFP4 rows split over fewer threads, and the
 * MoE batched by expert from T = 2 (the default kit takes it from T = 4: its batches of 17 and whole-model prefills),
 * and attention always with sdpa_f32 (the default kit takes sdpa_prefill.cu for every batch, decode steps with
 * their keys split over 32 blocks per KV head).
 * Skipped like {@link CudaConformanceTest}.
 */
class CudaSmallBlocksConformanceTest extends CudaConformanceTest {
    static final Map<String, String> KNOBS = Map.ofEntries(
            Map.entry("goss.cuda.linear.block", "96"),
            Map.entry("goss.cuda.linear.gemm.t", "2"),
            Map.entry("goss.cuda.linear.tile.t", "32"),
            Map.entry("goss.cuda.rmsnorm.block", "32"),
            Map.entry("goss.cuda.sdpa.block", "32"),
            Map.entry("goss.cuda.moe.block", "32"),
            Map.entry("goss.cuda.argmax.block", "32"),
            Map.entry("goss.cuda.elementwise.block", "32"),
            Map.entry(CudaKnobs.MOE_TILED_MIN_T.propertyName(), "2"),
            Map.entry(CudaKnobs.SDPA_TILED_MIN_T.propertyName(), "1000000"),
            Map.entry(CudaKnobs.SDPA_SPLITS.propertyName(), "0"));

    @Override
    protected BackendProvider provider() {
        return withProperties(super.provider(), KNOBS, backend -> {
            CudaBackend b = (CudaBackend) backend;
            if (b.sdpaBlock != 32 || b.linearBlock != 96 || b.gemmMinT != 2 || b.tileT != 32 || b.moeTiledMinT != 2
                    || b.sdpaTiledMinT != 1000000 || b.sdpaSplits != 0) {
                throw new IllegalStateException("knobs not applied: " + b.knobs());
            }
        });
    }
}
