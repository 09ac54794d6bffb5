package io.gossgpu.conformance;

import io.gossgpu.backend.BackendProvider;
import io.gossgpu.cpu.CpuBackendProvider;
import io.gossgpu.cpu.matmul.KernelSet;

/** The {@code cpu} backend on its Java float kernels (GOSS_CPU_KERNELS=java) against the reference, at float tolerances. */
class CpuConformanceTest extends BackendConformanceKit {
    @Override
    protected BackendProvider provider() {
        return CpuBackendProvider.withKernels(KernelSet.Isa.JAVA);
    }
}
