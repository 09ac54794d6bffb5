package io.gossgpu.cuda;

import io.gossgpu.GossException;
import io.gossgpu.backend.Availability;
import io.gossgpu.backend.Backend;
import io.gossgpu.backend.BackendProvider;

/**
 * The {@code cuda} backend's entry in backend selection. The driver bindings, PTX loading and device
 * plumbing exist, but the model's ops do not yet (issue 6), so it is never available: it says why
 * (no driver, no kernels, or the missing ops) instead of being an unknown name.
 */
public final class CudaBackendProvider implements BackendProvider {
    static final String NO_OPS = "the CUDA ops are not written yet (driver bindings only; see issue 6)";

    @Override
    public String name() {
        return "cuda";
    }

    @Override
    public int priority() {
        return 100;
    }

    @Override
    public Availability availability() {
        CudaDriver.Availability driver = CudaDriver.backendAvailability();
        return Availability.no(driver.available() ? NO_OPS : driver.reason());
    }

    @Override
    public Backend create() {
        throw new GossException("cuda backend unavailable: " + availability().reason());
    }
}
