package io.gossgpu.cuda;

import io.gossgpu.GossException;
import io.gossgpu.backend.Availability;
import io.gossgpu.backend.Backend;
import io.gossgpu.backend.BackendOptions;
import io.gossgpu.backend.BackendProvider;

/**
 * The {@code cuda} backend's entry in backend selection: available when libcuda loads, a device exists,
 * the PTX kernels are packaged and the driver can JIT them ({@link CudaDriver#backendAvailability()});
 * otherwise unavailable with that one-line reason. {@link #create} opens device 0.
 *
 * <p>Priority 100, above opencl and cpu, so {@code auto} picks it on an NVIDIA machine: the conformance kit passed
 * on an H100 (2026-11-27, 285 tests; backend-cuda/src/test/device/), and on that machine it decoded faster than the
 * opencl backend on the NVIDIA driver (89.0 against 71.8 tokens/s, measured in one lease; NOTES.md there).
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
        CudaDevice d = CudaDriver.device(0);
        String arch = CudaKernels.archFor(
                d.computeCapability(), CudaKernels.manifest().orElseThrow().archs());
        return Availability.yes(driver.deviceCount() + " CUDA device(s), driver CUDA "
                + CudaDriver.versionString(driver.driverVersion())
                + ": " + CudaKernels.loadable(driver.driverVersion()) + "; device 0 (" + d.name()
                + ", compute capability "
                + d.major() + "." + d.minor() + ") runs the " + arch + " PTX");
    }

    @Override
    public Backend create(BackendOptions options) {
        Availability a = availability();
        if (!a.available()) {
            throw new GossException("cuda backend unavailable: " + a.reason());
        }
        return CudaBackend.create(options);
    }

    @Override
    public java.util.List<io.gossgpu.backend.Knob> knobs() {
        return CudaKnobs.ALL;
    }

    /** The driver library's path, and the switch of the tests under the fake driver (CudaConformanceTest). */
    @Override
    public java.util.List<String> settingNames() {
        return java.util.List.of("GOSS_CUDA_LIBRARY", "GOSS_CUDA_FAKE_OPS");
    }
}
