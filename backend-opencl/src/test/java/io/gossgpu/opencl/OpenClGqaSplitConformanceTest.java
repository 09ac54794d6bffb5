package io.gossgpu.opencl;

import io.gossgpu.backend.BackendOptions;
import org.junit.jupiter.api.Test;

/**
 * The whole conformance kit with the GQA-shared attention kernel in split-K mode (3 keys per split, always
 * split) and small chunks: the decode path GPUs take by default, which PoCL's defaults (no split) do not.
 */
class OpenClGqaSplitConformanceTest extends OpenClConformanceTest {
    @Override
    protected BackendOptions options() {
        return BackendOptions.defaults()
                .with(OpenClKnobs.ATTENTION_SPLITKEYS, 3)
                .with(OpenClKnobs.ATTENTION_SPLITBELOW, 1000000000)
                .with(OpenClKnobs.ATTENTION_GQA, 1)
                .with(OpenClKnobs.ATTENTION_WG, 2);
    }

    @Test
    void theKnobsAreApplied() {
        assertOptionsInEffect(((OpenClBackend) backend).knobs());
    }
}
