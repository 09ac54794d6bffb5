package io.gossgpu.opencl;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.gossgpu.backend.BackendOptions;
import org.junit.jupiter.api.Test;

/**
 * The whole conformance kit again, with knobs that send every op down the kernels the default launch
 * configuration on PoCL does not use: split-K attention for every batch (2 keys per split), tiny attention
 * chunks (ATTENTION_WG 4: many online-softmax rescalings), the expert-grouped MoE even for decode, odd tiles.
 * (On a GPU the defaults already take the split and grouped paths for decode and prefill respectively.)
 */
class OpenClAlternatePathsConformanceTest extends OpenClConformanceTest {
    static final BackendOptions KNOBS = BackendOptions.defaults()
            .with(OpenClKnobs.ATTENTION_SPLITKEYS, 2)
            .with(OpenClKnobs.ATTENTION_SPLITBELOW, 1000000000)
            .with(OpenClKnobs.ATTENTION_WG, 4)
            .with(OpenClKnobs.MOE_PREFILL_MIN_T, 1)
            .with(OpenClKnobs.MOE_TILE_T, 3)
            .with(OpenClKnobs.MOE_WG, 2)
            .with(OpenClKnobs.DENSE_TILE_T, 3)
            .with(OpenClKnobs.DENSE_VEC, 0)
            .with(OpenClKnobs.ATTENTION_GQA, 0)
            .with(OpenClKnobs.DENSE_WG, 8)
            .with(OpenClKnobs.ARGMAX_WG, 4)
            .with(OpenClKnobs.RMSNORM_WG, 2);

    @Override
    protected BackendOptions options() {
        return KNOBS;
    }

    @Test
    void theKnobsAreApplied() {
        OpenClBackend b = (OpenClBackend) backend;
        assertEquals(2, b.knobs().get("GOSS_OPENCL_ATTENTION_SPLITKEYS"));
        assertOptionsInEffect(b.knobs());
    }
}
