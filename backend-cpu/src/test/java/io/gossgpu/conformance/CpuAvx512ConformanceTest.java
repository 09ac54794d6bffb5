package io.gossgpu.conformance;

import io.gossgpu.backend.BackendProvider;
import io.gossgpu.cpu.CpuBackendProvider;
import io.gossgpu.cpu.matmul.KernelSet;

/** The cpu backend on its native AVX-512 VNNI kernels; skipped, with the reason, on a CPU or build without them. */
class CpuAvx512ConformanceTest extends CpuNativeConformanceKit {
    @Override
    protected BackendProvider provider() {
        return CpuBackendProvider.withKernels(KernelSet.Isa.AVX512);
    }
}
