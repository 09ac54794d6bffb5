package io.gossgpu.opencl;

import io.gossgpu.backend.BackendProvider;
import io.gossgpu.conformance.SplitConformanceSuite;

/** The split-model kit in each of its placements ({@link SplitConformanceSuite}) with OpenCL as the GPU backend. */
class OpenClSplitConformanceTest extends SplitConformanceSuite {
    @Override
    protected BackendProvider gpu() {
        return new OpenClBackendProvider();
    }

    @Override
    protected boolean emulated() {
        return false;
    }
}
