package io.gossgpu.metal;

import io.gossgpu.backend.BackendProvider;
import io.gossgpu.conformance.BackendConformanceKit;

/**
 * The conformance kit on the Metal backend: on Linux against the emulated Metal device (the build sets
 * GOSS_METAL_EMULATOR=1 for tests), on macOS against the real GPU.
 */
class MetalConformanceTest extends BackendConformanceKit {
    @Override
    protected BackendProvider provider() {
        return new MetalBackendProvider();
    }
}
