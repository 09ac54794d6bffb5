package io.gossgpu.conformance;

import io.gossgpu.backend.BackendProvider;
import io.gossgpu.cpu.CpuBackendProvider;

/** The {@code cpu} backend (Vector API kernels, thread pool) against the reference. */
class CpuConformanceTest extends BackendConformanceKit {
    @Override
    protected BackendProvider provider() {
        return new CpuBackendProvider();
    }
}
