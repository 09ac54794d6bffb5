package io.gossgpu.opencl;

import io.gossgpu.backend.BackendProvider;
import io.gossgpu.conformance.BackendConformanceKit;

/**
 * The whole conformance kit on the selected OpenCL device (PoCL in CI after scripts/setup-pocl.sh; any
 * GPU driver elsewhere). Skipped, with the reason, where no OpenCL platform exists. Default tolerances.
 */
class OpenClConformanceTest extends BackendConformanceKit {
    @Override
    protected BackendProvider provider() {
        return new OpenClBackendProvider();
    }
}
