package io.gossgpu.opencl;

import io.gossgpu.backend.Availability;
import io.gossgpu.backend.Backend;
import io.gossgpu.backend.BackendOptions;
import io.gossgpu.backend.BackendProvider;
import io.gossgpu.backend.Knob;
import io.gossgpu.backend.KnobState;
import java.util.List;
import java.util.Optional;

/**
 * The {@code opencl} backend: priority 50 (below metal/cuda, above cpu) when an OpenCL GPU is present;
 * 5 (below cpu) when OpenCL only offers CPU devices such as PoCL's, where the native cpu backend is faster. Cheap to construct; the probe in
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
        if (!OpenCl.availability().available()) return 50;
        try {
            return OpenCl.devices().stream().anyMatch(OpenCl.DeviceInfo::isGpu) ? 50 : 5;
        } catch (RuntimeException | LinkageError e) {
            return 50; // availability() reports the problem
        }
    }

    @Override
    public Availability availability() {
        return OpenCl.availability();
    }

    @Override
    public Backend create(BackendOptions options) {
        return OpenClBackend.create(options);
    }

    @Override
    public List<Knob> knobs() {
        return OpenClKnobs.ALL;
    }

    /** On the device {@code options} select: its work-group limit, and the defaults of a GPU or a CPU device. */
    @Override
    public List<KnobState> knobStates(BackendOptions options) {
        if (!OpenCl.availability().available()) return BackendProvider.super.knobStates(options);
        OpenCl.DeviceInfo device;
        try {
            device = OpenCl.select(OpenCl.devices(), options.get(OpenCl.DEVICE));
        } catch (RuntimeException e) { // no such device: creating a backend says so; until then, the declarations
            return BackendProvider.super.knobStates(options);
        }
        return OpenClKnobs.states(options, device);
    }

    @Override
    public List<String> settingNames() {
        return List.of(OpenCl.DEVICE, "GOSS_OPENCL_LIBRARY");
    }

    @Override
    public Optional<String> deviceSetting() {
        return Optional.of(OpenCl.DEVICE);
    }

    /** Every platform's devices, numbered ({@link OpenCl#deviceListing}); none where OpenCL is unavailable. */
    @Override
    public List<String> deviceListing(BackendOptions options) {
        return OpenCl.availability().available() ? OpenCl.deviceListing(options.get(OpenCl.DEVICE)) : List.of();
    }
}
