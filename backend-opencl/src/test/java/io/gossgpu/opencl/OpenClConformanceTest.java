package io.gossgpu.opencl;

import io.gossgpu.backend.BackendProvider;
import io.gossgpu.conformance.BackendConformanceKit;

/**
 * The whole conformance kit on the selected OpenCL device (PoCL in CI after scripts/setup-pocl.sh; any
 * GPU driver elsewhere). Skipped, with the reason, where no OpenCL platform exists — unless
 * {@code GOSS_REQUIRE_OPENCL=1} (for CI; {@link io.gossgpu.conformance.RequiredBackends}), which turns the absence
 * into a failure. Default tolerances.
 */
class OpenClConformanceTest extends BackendConformanceKit {
    @Override
    protected boolean requiresFusedAddRmsNorm() {
        return true;
    }

    @Override
    protected BackendProvider provider() {
        return new OpenClBackendProvider();
    }
}
