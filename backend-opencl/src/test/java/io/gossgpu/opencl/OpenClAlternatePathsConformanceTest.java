package io.gossgpu.opencl;

import io.gossgpu.backend.BackendProvider;
import io.gossgpu.conformance.BackendConformanceKit;

import java.util.Map;

/**
 * The whole conformance kit again, with knobs that send every op down the kernels the default launch
 * configuration on PoCL does not use: split-K attention for every batch (2 keys per split), tiny attention
 * chunks (SDPA_WG 4: many online-softmax rescalings), the expert-grouped MoE even for decode, odd tiles.
 * (On a GPU the defaults already take the split and grouped paths for decode and prefill respectively.)
 */
class OpenClAlternatePathsConformanceTest extends BackendConformanceKit {
    static final Map<String, String> KNOBS = Map.ofEntries(
            Map.entry("goss.opencl.sdpa.splitkeys", "2"),
            Map.entry("goss.opencl.sdpa.splitbelow", "1000000000"),
            Map.entry("goss.opencl.sdpa.wg", "4"),
            Map.entry("goss.opencl.moe.groupmin", "1"),
            Map.entry("goss.opencl.moe.tile", "3"),
            Map.entry("goss.opencl.moe.wg", "2"),
            Map.entry("goss.opencl.linear.tile", "3"),
            Map.entry("goss.opencl.linear.vec", "0"),
            Map.entry("goss.opencl.sdpa.gqa", "0"),
            Map.entry("goss.opencl.linear.wg", "8"),
            Map.entry("goss.opencl.argmax.wg", "4"),
            Map.entry("goss.opencl.rmsnorm.wg", "2"));

    @Override
    protected BackendProvider provider() {
        return withKnobs(KNOBS);
    }

    /** The opencl provider, creating its backend with {@code knobs} set as system properties (then cleared). */
    static BackendProvider withKnobs(Map<String, String> knobs) {
        return withProperties(new OpenClBackendProvider(), knobs, b -> {
            if (knobs.containsKey("goss.opencl.sdpa.splitkeys")
                    && ((OpenClBackend) b).sdpaSplitKeys != Integer.parseInt(knobs.get("goss.opencl.sdpa.splitkeys")))
                throw new IllegalStateException("knobs not applied");
        });
    }
}
