package io.gossgpu.cpu;

import io.gossgpu.backend.Availability;
import io.gossgpu.backend.Backend;
import io.gossgpu.backend.BackendOptions;
import io.gossgpu.backend.BackendProvider;
import io.gossgpu.backend.Knob;
import io.gossgpu.backend.KnobValues;
import io.gossgpu.cpu.matmul.KernelSet;
import io.gossgpu.cpu.matmul.NativeCpu;

/**
 * The {@code cpu} backend: native integer kernels (AVX-512 VNNI or AVX2, from libgoss_cpu) where this
 * platform has them, else Java Vector API kernels, on a persistent pool of threads. Priority 10 (above
 * {@code reference}, below GPU backends). Always available.
 *
 * <p>Settings of the {@link BackendOptions} it is created with: threads {@link #THREADS} ({@code GOSS_CPU_THREADS};
 * the CLI's {@code --threads} sets it), else every available processor; kernels {@link #KERNELS}
 * ({@code GOSS_CPU_KERNELS}): {@code auto} (default: the fastest this machine runs), {@code avx512}, {@code avx2},
 * or {@code java} (the float kernels, exact to float rounding, for {@code verify} and comparisons).
 */
public final class CpuBackendProvider implements BackendProvider {
    public static final String NAME = "cpu";
    /** The most threads accepted. */
    public static final int MAX_THREADS = 1024;
    /** Threads of the pool; unset: every available processor. */
    public static final Knob THREADS = Knob.setting(NAME, "THREADS", 1, KnobValues.range(1, MAX_THREADS), "threads",
            "threads of the cpu backend").defaultNote("every available processor");
    /** Warm the JIT up on a tiny model in the background when the first backend is created (1, default) or not (0). */
    public static final Knob WARMUP = Knob.setting(NAME, "WARMUP", 1, KnobValues.oneOf(0, 1), "warm-up",
            "compile the cpu backend's code on a tiny generated model in the background while the model loads, for a fast first reply");
    /** The kernel family setting: {@code auto}, {@code avx512}, {@code avxvnni}, {@code avx2} or {@code java}. */
    public static final String KERNELS = "GOSS_CPU_KERNELS";

    private final KernelSet.Isa fixedKernels;
    private final boolean kernelsFixed;

    /** Kernels from the setting {@value #KERNELS}. */
    public CpuBackendProvider() {
        this.fixedKernels = null;
        this.kernelsFixed = false;
    }

    private CpuBackendProvider(KernelSet.Isa kernels) {
        this.fixedKernels = kernels;
        this.kernelsFixed = true;
    }

    /** A provider whose backends use {@code kernels} (null: the fastest here) whatever the setting says. */
    public static CpuBackendProvider withKernels(KernelSet.Isa kernels) {
        return new CpuBackendProvider(kernels);
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public int priority() {
        return 10;
    }

    @Override
    public Availability availability() {
        if (kernelsFixed && fixedKernels != null && !NativeCpu.supports(fixedKernels)) {
            String why = NativeCpu.unavailableReason();
            return Availability.no("cpu kernels " + fixedKernels.knobValue() + " cannot run here: "
                    + (why != null ? why : "this CPU lacks the instructions"));
        }
        String nativeReason = NativeCpu.unavailableReason();
        String kernels = nativeReason == null ? "native " + NativeCpu.best().knobValue() + " kernels"
                : "Java kernels (" + nativeReason + ")";
        return Availability.yes(kernels + ", " + (CpuKernels.vectorApiPresent()
                ? "Java Vector API, " + Runtime.getRuntime().availableProcessors() + " CPUs"
                : "scalar fallback: jdk.incubator.vector is not in the boot layer (add --add-modules jdk.incubator.vector)"));
    }

    @Override
    public Backend create(BackendOptions options) {
        KernelSet.Isa isa = kernelsFixed ? fixedKernels : kernels(options);
        KernelSet kernels = KernelSet.of(isa, CpuKernels.best());
        CpuBackend backend = new CpuBackend(threads(options), kernels);
        if (WARMUP.value(options, 1) == 1) CpuWarmUp.startOnce(kernels);
        return backend;
    }

    /** The thread count {@code options} give; a GossException naming the setting, the value and the range when invalid. */
    public static int threads(BackendOptions options) {
        return THREADS.value(options, Math.min(MAX_THREADS, Runtime.getRuntime().availableProcessors()));
    }

    /** The kernel family {@code options} name, null for {@code auto}; a GossException naming the setting when invalid. */
    public static KernelSet.Isa kernels(BackendOptions options) {
        String v = options.get(KERNELS);
        return v == null ? null : KernelSet.Isa.parse(KERNELS, v);
    }
}
