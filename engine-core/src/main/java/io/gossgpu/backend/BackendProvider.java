package io.gossgpu.backend;

/**
 * Found by {@link java.util.ServiceLoader} ({@code META-INF/services/io.gossgpu.backend.BackendProvider}).
 * Cheap to construct: probing the device happens in {@link #availability()}, never in the constructor.
 */
public interface BackendProvider {
    /** The name users pass to {@code --backend}: {@code reference}, {@code cpu}, {@code opencl}, {@code cuda}, {@code metal}. */
    String name();

    /** Higher wins for {@code auto}: metal/cuda 100, opencl 50, cpu 10, reference 0. */
    int priority();

    /** Whether this machine can run the backend, with a one-line reason when not. Must not throw. */
    Availability availability();

    /**
     * A new backend instance (owns its device memory until closed) with the knobs and settings in {@code options}
     * (names of other backends are ignored); an invalid value is a {@link io.gossgpu.GossException} naming it. Only
     * called when available.
     */
    Backend create(BackendOptions options);

    /** The knobs this backend reads ({@link Knob}), known without opening a device; none for the reference backend. */
    default java.util.List<Knob> knobs() {
        return java.util.List.of();
    }

    /**
     * Each of {@link #knobs()} as a backend created here with {@code options} would run it: the value in effect on
     * this machine's device, where it came from, what the device allows ({@link KnobState}). Probes the device
     * without creating a backend and never throws (an invalid setting is reported in its state; an unavailable
     * device gives the declared defaults and ranges, which is also the default implementation).
     */
    default java.util.List<KnobState> knobStates(BackendOptions options) {
        return knobs().stream().map(k -> k.state(options)).toList();
    }

    /**
     * The environment-variable names of this backend's other settings, read besides its knobs ({@code
     * GOSS_OPENCL_DEVICE}, {@code GOSS_CUDA_LIBRARY}), so that a name nothing reads can be told apart ({@link SettingNames}).
     */
    default java.util.List<String> settingNames() {
        return java.util.List.of();
    }

    /**
     * The setting that picks one of this machine's devices ({@code GOSS_OPENCL_DEVICE}), which the command line's
     * {@code --device} sets; empty where the backend has no choice to offer.
     */
    default java.util.Optional<String> deviceSetting() {
        return java.util.Optional.empty();
    }

    /**
     * The setting that says how many CPU threads this backend runs its work on ({@code GOSS_CPU_THREADS}), which the
     * command line's {@code --threads} sets; empty where the backend has no such choice.
     */
    default java.util.Optional<String> threadsSetting() {
        return java.util.Optional.empty();
    }

    /**
     * Lines describing this machine's devices for {@code goss-gpu info --backends}, the one {@code options} select
     * marked with {@code *}; empty where the backend is unavailable or has no list to show. Never throws.
     */
    default java.util.List<String> deviceListing(BackendOptions options) {
        return java.util.List.of();
    }
}
