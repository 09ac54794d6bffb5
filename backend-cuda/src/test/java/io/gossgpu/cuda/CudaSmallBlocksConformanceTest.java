package io.gossgpu.cuda;

import io.gossgpu.backend.Availability;
import io.gossgpu.backend.Backend;
import io.gossgpu.backend.BackendProvider;

import java.util.Map;

/**
 * The whole conformance kit again with every block at its smallest (32 threads) and LINEAR at 96, and the
 * smallest GEMM tile (32 tokens × 64 rows) from 2 tokens on (the default kit takes the matvec up to 8): attention
 * keys in chunks of 32 (more online-softmax rescalings than the test sequences have with the default 128),
 * one or three warps per linear block (a partial last block), MXFP4 rows split over fewer threads.
 * Skipped like {@link CudaConformanceTest}.
 */
class CudaSmallBlocksConformanceTest extends CudaConformanceTest {
    static final Map<String, String> KNOBS = Map.of(
            "goss.cuda.linear.block", "96",
            "goss.cuda.linear.gemm.t", "2",
            "goss.cuda.linear.tile.t", "32",
            "goss.cuda.rmsnorm.block", "32",
            "goss.cuda.sdpa.block", "32",
            "goss.cuda.moe.block", "32",
            "goss.cuda.argmax.block", "32",
            "goss.cuda.elementwise.block", "32");

    @Override
    protected BackendProvider provider() {
        BackendProvider p = super.provider();
        return new BackendProvider() {
            @Override
            public String name() {
                return p.name();
            }

            @Override
            public int priority() {
                return p.priority();
            }

            @Override
            public Availability availability() {
                return p.availability();
            }

            @Override
            public Backend create() {
                KNOBS.forEach(System::setProperty);
                try {
                    CudaBackend b = (CudaBackend) p.create();
                    if (b.sdpaBlock != 32 || b.linearBlock != 96 || b.gemmMinT != 2 || b.tileT != 32) {
                        throw new IllegalStateException("knobs not applied: " + b.knobs());
                    }
                    return b;
                } finally {
                    KNOBS.keySet().forEach(System::clearProperty);
                }
            }
        };
    }
}
