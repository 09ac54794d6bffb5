package io.gossgpu.cuda;

import io.gossgpu.GossException;
import io.gossgpu.backend.Availability;
import io.gossgpu.backend.Backend;
import io.gossgpu.backend.BackendProvider;

/**
 * The {@code cuda} backend's entry in backend selection: available when libcuda loads, a device exists,
 * the PTX kernels are packaged and the driver can JIT them ({@link CudaDriver#backendAvailability()});
 * otherwise unavailable with that one-line reason. {@link #create()} opens device 0.
 */
public final class CudaBackendProvider implements BackendProvider {

    @Override
    public String name() {
        return CudaBackend.NAME;
    }

    @Override
    public int priority() {
        return 100;
    }

    @Override
    public Availability availability() {
        CudaDriver.Availability driver = CudaDriver.backendAvailability();
        if (!driver.available()) {
            return Availability.no(driver.reason());
        }
        return Availability.yes(driver.deviceCount() + " CUDA device(s), driver CUDA " + CudaDriver.versionString(driver.driverVersion()));
    }

    @Override
    public Backend create() {
        Availability a = availability();
        if (!a.available()) {
            throw new GossException("cuda backend unavailable: " + a.reason());
        }
        return CudaBackend.create();
    }
}
