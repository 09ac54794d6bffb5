package io.gossgpu.cuda;

import io.gossgpu.backend.Availability;
import io.gossgpu.backend.Backend;
import io.gossgpu.backend.BackendProvider;
import io.gossgpu.conformance.BackendConformanceKit;

/**
 * The whole conformance kit on CUDA device 0. Without libcuda, a device or the PTX every test is skipped
 * with the reason. Under the fake driver (backend-cuda/emu/fake-driver/test-with-fake-driver.sh) the
 * kit runs against CudaBackend with the real backend-cuda/kernels source compiled for the CPU under the CUDA
 * emulator (backend-cuda/emu/cuda-emu: fibers per thread, real __syncthreads and warp-shuffle rendezvous): that checks
 * the Java side (uploads and layouts, argument order, launch shapes, offsets, KV ring) and the kernels'
 * logic; PTX code generation, timing and memory-ordering races still need a real GPU (src/test/device/README.md).
 * {@code GOSS_CUDA_FAKE_OPS=0} skips the kit under the fake driver instead.
 */
class CudaConformanceTest extends BackendConformanceKit {
    @Override
    protected boolean requiresFusedAddRmsNorm() {
        return true;
    }

    static final String FAKE_DRIVER_DEVICE = "goss-gpu fake CUDA driver";

    @Override
    protected BackendProvider provider() {
        CudaBackendProvider p = new CudaBackendProvider();
        return new BackendProvider() {
            @Override
            public String name() {
                return p.name();
            }

            @Override
            public int priority() {
                return p.priority();
            }

            @Override
            public Availability availability() {
                Availability a = p.availability();
                if (a.available()
                        && "0".equals(System.getenv("GOSS_CUDA_FAKE_OPS"))
                        && CudaDriver.devices().stream().anyMatch(d -> d.name().equals(FAKE_DRIVER_DEVICE))) {
                    return Availability.no("GOSS_CUDA_FAKE_OPS=0: the kit is skipped under the fake CUDA driver");
                }
                return a;
            }

            @Override
            public Backend create(io.gossgpu.backend.BackendOptions options) {
                return p.create(options);
            }
        };
    }

    /** The fake driver, whose launches run the kernels on the CPU emulator. */
    @Override
    protected boolean onEmulatedDevice() {
        return CudaDriver.devices().stream().anyMatch(d -> d.name().equals(FAKE_DRIVER_DEVICE));
    }
}
