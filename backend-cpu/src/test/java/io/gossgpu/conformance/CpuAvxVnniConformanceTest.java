package io.gossgpu.conformance;

import io.gossgpu.backend.BackendProvider;
import io.gossgpu.cpu.CpuBackendProvider;
import io.gossgpu.cpu.matmul.KernelSet;

/** The cpu backend on its native AVX-VNNI kernels (also run on AVX-512 machines that have AVX-VNNI); skipped, with the reason, where they cannot run. */
class CpuAvxVnniConformanceTest extends CpuNativeConformanceKit {
    @Override
    protected BackendProvider provider() {
        return CpuBackendProvider.withKernels(KernelSet.Isa.AVXVNNI);
    }
}
