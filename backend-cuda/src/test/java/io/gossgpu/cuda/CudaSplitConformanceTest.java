package io.gossgpu.cuda;

import io.gossgpu.backend.BackendProvider;
import io.gossgpu.conformance.SplitConformanceSuite;

/** The split-model kit in each of its placements ({@link SplitConformanceSuite}) with CUDA as the GPU backend. */
class CudaSplitConformanceTest extends SplitConformanceSuite {
    @Override
    protected BackendProvider gpu() {
        return new CudaBackendProvider();
    }

    @Override
    protected boolean emulated() {
        return CudaDriver.devices().stream().anyMatch(d -> d.name().equals(CudaConformanceTest.FAKE_DRIVER_DEVICE));
    }
}
