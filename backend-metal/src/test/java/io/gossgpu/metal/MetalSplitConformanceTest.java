package io.gossgpu.metal;

import io.gossgpu.backend.BackendProvider;
import io.gossgpu.conformance.SplitConformanceSuite;

/** The split-model kit in each of its placements ({@link SplitConformanceSuite}) with Metal as the GPU backend. */
class MetalSplitConformanceTest extends SplitConformanceSuite {
    @Override
    protected BackendProvider gpu() {
        return new MetalBackendProvider();
    }

    @Override
    protected boolean emulated() {
        return System.getenv("GOSS_METAL_EMULATOR") != null;
    }
}
