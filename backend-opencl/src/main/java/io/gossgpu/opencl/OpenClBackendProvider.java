package io.gossgpu.opencl;

import io.gossgpu.backend.Availability;
import io.gossgpu.backend.Backend;
import io.gossgpu.backend.BackendProvider;

/**
 * The {@code opencl} backend (priority 50: below metal/cuda, above cpu). Cheap to construct; the probe in
 * {@link #availability()} loads LWJGL's OpenCL bindings lazily and reports "no OpenCL platform found
 * (install an ICD, e.g. pocl-opencl-icd)" on machines without one, never an exception.
 */
public final class OpenClBackendProvider implements BackendProvider {
    @Override
    public String name() {
        return OpenClBackend.NAME;
    }

    @Override
    public int priority() {
        return 50;
    }

    @Override
    public Availability availability() {
        return OpenCl.availability();
    }

    @Override
    public Backend create() {
        return OpenClBackend.create();
    }
}
