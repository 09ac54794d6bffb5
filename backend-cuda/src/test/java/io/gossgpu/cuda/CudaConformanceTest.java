package io.gossgpu.cuda;

import io.gossgpu.backend.Availability;
import io.gossgpu.backend.Backend;
import io.gossgpu.backend.BackendProvider;
import io.gossgpu.conformance.BackendConformanceKit;

/**
 * The whole conformance kit on CUDA device 0. Without libcuda, a device or the PTX every test is skipped
 * with the reason. Under the fake driver (backend-cuda/src/test/fake-driver, which implements only add_f32
 * and rmsnorm_f32 in C) the backend is reported unavailable here, so the kit is skipped with that reason.
 */
class CudaConformanceTest extends BackendConformanceKit {
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
                if (a.available() && CudaDriver.devices().stream().anyMatch(d -> d.name().equals(FAKE_DRIVER_DEVICE))) {
                    return Availability.no("the fake CUDA driver runs only add_f32 and rmsnorm_f32, not the model kernels");
                }
                return a;
            }

            @Override
            public Backend create() {
                return p.create();
            }
        };
    }
}
