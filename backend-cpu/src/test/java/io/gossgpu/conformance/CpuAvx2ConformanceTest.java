package io.gossgpu.conformance;

import io.gossgpu.backend.BackendProvider;
import io.gossgpu.cpu.CpuBackendProvider;
import io.gossgpu.cpu.matmul.KernelSet;

/** The cpu backend on its native AVX2 kernels (also run on AVX-512 machines); skipped, with the reason, where they cannot run. */
class CpuAvx2ConformanceTest extends CpuNativeConformanceKit {
    @Override
    protected BackendProvider provider() {
        return CpuBackendProvider.withKernels(KernelSet.Isa.AVX2);
    }
}
