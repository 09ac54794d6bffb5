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

    /** The launch knobs this backend reads ({@link Knob}), known without opening a device; none for CPU backends. */
    default java.util.List<Knob> knobs() {
        return java.util.List.of();
    }
}
