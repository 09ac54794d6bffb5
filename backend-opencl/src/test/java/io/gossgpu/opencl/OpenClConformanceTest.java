package io.gossgpu.opencl;

import io.gossgpu.backend.Availability;
import io.gossgpu.backend.BackendProvider;
import io.gossgpu.backend.Backends;
import io.gossgpu.conformance.BackendConformanceKit;
import org.junit.jupiter.api.BeforeAll;

import static org.junit.jupiter.api.Assertions.fail;

/**
 * The whole conformance kit on the selected OpenCL device (PoCL in CI after scripts/setup-pocl.sh; any
 * GPU driver elsewhere). Skipped, with the reason, where no OpenCL platform exists — unless
 * {@code GOSS_REQUIRE_OPENCL=1} (for CI), which turns the absence into a failure. Default tolerances.
 */
class OpenClConformanceTest extends BackendConformanceKit {
    @Override
    protected BackendProvider provider() {
        return new OpenClBackendProvider();
    }

    @BeforeAll
    void failInsteadOfSkippingWhenRequired() {
        Availability a = Backends.safeAvailability(provider());
        if (!a.available() && "1".equals(System.getenv("GOSS_REQUIRE_OPENCL")))
            fail("GOSS_REQUIRE_OPENCL=1 but the opencl backend is unavailable: " + a.reason());
    }
}
