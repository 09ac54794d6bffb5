package io.gossgpu.conformance;

import io.gossgpu.backend.BackendProvider;
import io.gossgpu.cpu.CpuBackendProvider;
import io.gossgpu.cpu.matmul.KernelSet;

/**
 * The split kit with the cpu backend (Java kernels) in the GPU's place: checks {@link io.gossgpu.placement.SplitBackend}
 * and {@link io.gossgpu.placement.SplitModel} on every machine; the GPU modules run the same kit on their devices.
 */
class SplitCpuConformanceTest extends SplitConformanceKit {
    @Override
    protected BackendProvider gpu() {
        return CpuBackendProvider.withKernels(KernelSet.Isa.JAVA);
    }

    @Override
    protected Placement placement() {
        return Placement.EVERY_OTHER;
    }
}
