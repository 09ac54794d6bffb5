package io.gossgpu.opencl;

import io.gossgpu.backend.BackendProvider;
import io.gossgpu.conformance.BackendConformanceKit;

import java.util.Map;

/**
 * The whole conformance kit with the GQA-shared attention kernel in split-K mode (3 keys per split, always
 * split) and small chunks: the decode path GPUs take by default, which PoCL's defaults (no split) do not.
 */
class OpenClGqaSplitConformanceTest extends BackendConformanceKit {
    @Override
    protected BackendProvider provider() {
        return OpenClAlternatePathsConformanceTest.withKnobs(Map.of(
                "goss.opencl.sdpa.splitkeys", "3",
                "goss.opencl.sdpa.splitbelow", "1000000000",
                "goss.opencl.sdpa.gqa", "1",
                "goss.opencl.sdpa.wg", "2"));
    }
}
