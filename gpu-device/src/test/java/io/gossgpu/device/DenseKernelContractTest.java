package io.gossgpu.device;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The dense and embed kernels take what {@link DensePipeline} passes them: {@link DensePipeline#denseBuffers} buffers
 * then {@code DenseParams}, {@link DensePipeline#embedBuffers} then {@code EmbedParams}. OpenCL's and Metal's kernels
 * take neither scales nor three outputs; CUDA's (dense.cu and embed.cu, made by macros, one per format) declare their
 * counts from the same two functions in DenseLauncher, which CudaKernelSignaturesTest checks against the PTX. Reads the
 * sources, needs no device.
 */
class DenseKernelContractTest {
    /** Per API without scales or three outputs: its dense kernels. */
    private static final Map<String, List<String>> DENSE =
            Map.of("opencl", List.of("dense"), "metal", List.of("dense", "dense_tiled"));

    @Test
    void denseAndEmbedTakeThePipelinesBuffersThenTheirParams() {
        DENSE.forEach((api, kernels) -> {
            String src = KernelSources.source(api);
            for (String k : kernels)
                KernelSources.assertBuffersThenParams(
                        api, src, k, DensePipeline.denseBuffers(false, false), "DenseParams");
            KernelSources.assertBuffersThenParams(
                    api, src, DensePipeline.EMBED, DensePipeline.embedBuffers(false), "EmbedParams");
        });
    }
}
