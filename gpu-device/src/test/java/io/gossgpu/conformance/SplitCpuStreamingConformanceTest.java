package io.gossgpu.conformance;

import io.gossgpu.backend.BackendProvider;
import io.gossgpu.cpu.CpuBackendProvider;
import io.gossgpu.cpu.matmul.KernelSet;

/**
 * The split kit with streaming forced on (steps of 2+ tokens stream a CPU layer's experts to the "GPU", here the cpu
 * backend in its place): checks the streaming path of {@link io.gossgpu.placement.SplitBackend} on every machine.
 */
class SplitCpuStreamingConformanceTest extends SplitConformanceKit {
    @Override
    protected BackendProvider gpu() {
        return CpuBackendProvider.withKernels(KernelSet.Isa.JAVA);
    }

    @Override
    protected Placement placement() {
        return Placement.EVERY_OTHER;
    }

    @Override
    protected int streamMinTokens() {
        return 2;
    }
}
