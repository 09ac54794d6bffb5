package io.gossgpu.metal;

import io.gossgpu.backend.BackendOptions;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The whole conformance kit again with other threadgroup sizes (every kernel must be correct at any allowed size,
 * including partial tiles and several simdgroups per threadgroup) and the tiled prefill path from T = 2 (the default
 * kit takes it from T = 4). Skipped like {@link MetalConformanceTest}.
 */
class MetalOtherThreadgroupSizesConformanceTest extends MetalConformanceTest {
    static final Map<MetalKernel, Integer> SIZES = Map.ofEntries(
            Map.entry(MetalKernel.EMBED, 32),
            Map.entry(MetalKernel.RMSNORM, 32),
            Map.entry(MetalKernel.DENSE, 32),
            Map.entry(MetalKernel.DENSE_TILED, 32),
            Map.entry(MetalKernel.ROPE, 32),
            Map.entry(MetalKernel.KV_STORE, 32),
            Map.entry(MetalKernel.KV_ROUND, 64),
            Map.entry(MetalKernel.TOPK_SOFTMAX, 32),
            Map.entry(MetalKernel.MOE_GATE_UP, 32),
            Map.entry(MetalKernel.MOE_DOWN, 64),
            Map.entry(MetalKernel.MOE_SORT, 32),
            Map.entry(MetalKernel.MOE_GATE_UP_TILED, 1024),
            Map.entry(MetalKernel.MOE_DOWN_TILED, 96),
            Map.entry(MetalKernel.MOE_COMBINE, 1024),
            Map.entry(MetalKernel.ADD, 32),
            Map.entry(MetalKernel.ARGMAX, 64));

    static final BackendOptions KNOBS = knobs();

    private static BackendOptions knobs() {
        BackendOptions o = BackendOptions.defaults()
                .with(MetalKnobs.DENSE_PREFILL_MIN_T, 2)
                .with(MetalKnobs.MOE_PREFILL_MIN_T, 2);
        for (var e : SIZES.entrySet()) o = o.with(e.getKey().threadgroup, e.getValue());
        return o;
    }

    @Override
    protected BackendOptions options() {
        return KNOBS;
    }

    @Test
    void theKnobsAreApplied() {
        assertOptionsInEffect(((MetalBackend) backend).knobs());
    }

    /** On the emulator the demo model's prefix runs once, in {@link MetalConformanceTest} (default sizes). */
    @Override
    protected boolean runsEmulatedDemo() {
        return false;
    }
}
