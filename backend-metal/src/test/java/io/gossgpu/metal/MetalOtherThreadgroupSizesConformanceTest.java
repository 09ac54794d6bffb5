package io.gossgpu.metal;

import io.gossgpu.backend.BackendOptions;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The whole conformance kit again with other threadgroup sizes (every kernel must be correct at any allowed size,
 * including partial tiles and several simdgroups per threadgroup) and the tiled prefill path from T = 2 (the default
 * kit takes it from T = 4). Skipped like {@link MetalConformanceTest}.
 */
class MetalOtherThreadgroupSizesConformanceTest extends MetalConformanceTest {
    static final Map<String, Integer> SIZES = Map.ofEntries(
            Map.entry("embed", 32), Map.entry("rmsnorm", 32), Map.entry("dense", 32), Map.entry("dense_tiled", 32),
            Map.entry("rope", 32), Map.entry("kv_store", 32), Map.entry("topk_softmax", 32), Map.entry("moe_gate_up", 32),
            Map.entry("moe_down", 64), Map.entry("moe_sort", 32), Map.entry("moe_gate_up_tiled", 1024),
            Map.entry("moe_down_tiled", 96), Map.entry("moe_combine", 1024), Map.entry("add", 32), Map.entry("argmax", 64));

    static final BackendOptions KNOBS = knobs();

    private static BackendOptions knobs() {
        BackendOptions o = BackendOptions.defaults().with(Knobs.PREFILL_MIN_T, 2);
        for (var e : SIZES.entrySet()) o = o.with(Knobs.tg(e.getKey()), e.getValue());
        return o;
    }

    @Override
    protected BackendOptions options() {
        return KNOBS;
    }

    @Test
    void theKnobsAreApplied() {
        MetalBackend b = (MetalBackend) backend;
        SIZES.forEach((kernel, size) -> assertEquals(size, b.kernel(kernel).threads(), kernel));
        assertEquals(2, b.prefillMinT(), "GOSS_METAL_PREFILL_MIN_T");
    }

    /** On the emulator the demo model's prefix runs once, in {@link MetalConformanceTest} (default sizes). */
    @Override
    protected boolean runsEmulatedDemo() {
        return false;
    }
}
