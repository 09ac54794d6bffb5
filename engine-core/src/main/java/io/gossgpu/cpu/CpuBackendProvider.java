package io.gossgpu.cpu;

import io.gossgpu.GossException;
import io.gossgpu.backend.Availability;
import io.gossgpu.backend.Backend;
import io.gossgpu.backend.BackendProvider;
import io.gossgpu.cpu.matmul.KernelSet;
import io.gossgpu.cpu.matmul.NativeCpu;

import java.util.Locale;

/**
 * The {@code cpu} backend: native integer kernels (AVX-512 VNNI or AVX2, from libgoss_cpu) where this
 * platform has them, else Java Vector API kernels, on a persistent pool of threads. Priority 10 (above
 * {@code reference}, below GPU backends). Always available.
 *
 * <p>Threads: system property {@value #THREADS_PROPERTY} (the CLI's {@code --threads} sets it), else the
 * environment variable {@value #THREADS_ENV}, else every available processor. Kernels: system property
 * {@value #KERNELS_PROPERTY}, else {@value #KERNELS_ENV}: {@code auto} (default: the fastest this machine
 * runs), {@code avx512}, {@code avx2}, or {@code java} (the float kernels, exact to float rounding, for
 * {@code verify} and comparisons).
 */
public final class CpuBackendProvider implements BackendProvider {
    public static final String NAME = "cpu";
    public static final String THREADS_PROPERTY = "goss.cpu.threads";
    public static final String THREADS_ENV = "GOSS_CPU_THREADS";
    public static final String KERNELS_PROPERTY = "goss.cpu.kernels";
    public static final String KERNELS_ENV = "GOSS_CPU_KERNELS";
    /** The most threads accepted. */
    public static final int MAX_THREADS = 1024;

    private final KernelSet.Isa fixedKernels;
    private final boolean kernelsFixed;

    /** Kernels from the knob ({@value #KERNELS_ENV}). */
    public CpuBackendProvider() {
        this.fixedKernels = null;
        this.kernelsFixed = false;
    }

    private CpuBackendProvider(KernelSet.Isa kernels) {
        this.fixedKernels = kernels;
        this.kernelsFixed = true;
    }

    /** A provider whose backends use {@code kernels} (null: the fastest here) whatever the knob says. */
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
    public Backend create() {
        KernelSet.Isa isa = kernelsFixed ? fixedKernels : kernels();
        return new CpuBackend(threads(), KernelSet.of(isa, CpuKernels.best()));
    }

    /** The configured thread count; a GossException naming the knob, the value and the range when invalid. */
    public static int threads() {
        String prop = System.getProperty(THREADS_PROPERTY);
        if (prop != null && !prop.isBlank()) return parse(THREADS_PROPERTY + " (system property)", prop);
        String env = System.getenv(THREADS_ENV);
        if (env != null && !env.isBlank()) return parse(THREADS_ENV + " (environment)", env);
        return Runtime.getRuntime().availableProcessors();
    }

    /** The configured kernel family, null for {@code auto}; a GossException naming the knob when invalid. */
    public static KernelSet.Isa kernels() {
        String prop = System.getProperty(KERNELS_PROPERTY);
        if (prop != null && !prop.isBlank()) return KernelSet.Isa.parse(KERNELS_PROPERTY, prop);
        String env = System.getenv(KERNELS_ENV);
        if (env != null && !env.isBlank()) return KernelSet.Isa.parse(KERNELS_ENV, env);
        return null;
    }

    static int parse(String knob, String value) {
        String v = value.trim().toLowerCase(Locale.ROOT);
        int n;
        try {
            n = Integer.parseInt(v);
        } catch (NumberFormatException e) {
            n = -1;
        }
        if (n < 1 || n > MAX_THREADS)
            throw new GossException(knob + " = '" + value + "' is invalid; allowed: an integer from 1 to " + MAX_THREADS);
        return n;
    }
}
