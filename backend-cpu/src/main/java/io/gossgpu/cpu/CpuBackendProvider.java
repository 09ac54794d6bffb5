package io.gossgpu.cpu;

import io.gossgpu.backend.Availability;
import io.gossgpu.backend.Backend;
import io.gossgpu.backend.BackendOptions;
import io.gossgpu.backend.BackendProvider;
import io.gossgpu.backend.Knob;
import io.gossgpu.backend.KnobState;
import io.gossgpu.backend.KnobValues;
import io.gossgpu.cpu.compute.CpuKernels;
import io.gossgpu.cpu.matmul.KernelSet;
import io.gossgpu.cpu.matmul.NativeCpu;
import java.util.ArrayList;
import java.util.List;

/**
 * The {@code cpu} backend: native integer kernels (AVX-512 VNNI or AVX2, from libgoss_cpu) where this
 * platform has them, else Java Vector API kernels, on a persistent pool of threads. Priority 10 (above
 * {@code reference}, below GPU backends). Always available.
 *
 * <p>Settings of the {@link BackendOptions} it is created with: threads {@link #THREADS} ({@code GOSS_CPU_THREADS};
 * the CLI's {@code --threads} sets it), else every available processor; kernels {@link #KERNELS}
 * ({@code GOSS_CPU_KERNELS}): {@code auto} (default: the fastest this machine runs), {@code avx512}, {@code avx2},
 * or {@code java} (the float kernels, exact to float rounding, for {@code verify} and comparisons); float dense weights
 * {@link #DENSE} ({@code GOSS_CPU_DENSE}): {@code q8} (default) or {@code float}.
 */
public final class CpuBackendProvider implements BackendProvider {
    public static final String NAME = "cpu";
    /** The most threads accepted. */
    public static final int MAX_THREADS = 1024;
    /** Threads of the pool; unset: every available processor. */
    public static final Knob THREADS = Knob.setting(
                    NAME, "THREADS", 1, KnobValues.range(1, MAX_THREADS), "threads", "threads of the cpu backend")
            .defaultNote("every available processor");
    /** Warm the JIT up on a tiny model in the background when the first backend is created (1, default) or not (0). */
    public static final Knob WARMUP = Knob.setting(
                    NAME,
                    "WARMUP",
                    1,
                    KnobValues.oneOf(0, 1),
                    "warm-up",
                    "compile the cpu backend's code on a tiny generated model in the background while the model loads, for a fast first reply")
            .tuneValues(1); // nothing to time: it changes the first reply, not the speed
    /**
     * The kernel family: {@code auto}, {@code java} (float kernels), {@code avx2}, {@code avxvnni} or {@code avx512}
     * (int8 kernels); a CPU allows the families up to the best it runs (the names are in that order). Unset: the best.
     */
    public static final Knob KERNELS = Knob.setting(
                    NAME,
                    "KERNELS",
                    0,
                    KnobValues.named("auto", "java", "avx2", "avxvnni", "avx512"),
                    "the kernel family",
                    "matrix kernels: java (Vector API, float) or native int8 ones (avx2, avxvnni, avx512)")
            .defaultNote("the fastest this machine runs")
            .tuneValues(1, 2, 3, 4);

    /**
     * Float dense weights (F32/F16/BF16: OpenAI's attention and unembedding matrices) on the native kernels: {@code q8}
     * (default: quantized to Q8_0 at load, int8 products, half the bytes of BF16 per token) or {@code float} (read in
     * place, float products). The {@code java} kernels always multiply in float.
     */
    public static final Knob DENSE = Knob.setting(
                    NAME,
                    "DENSE",
                    0,
                    KnobValues.named("q8", "float"),
                    "float dense weights",
                    "float (BF16/F16/F32) dense weights on the native kernels: q8 (quantized to Q8_0 at load) or float (read in place)")
            .tuneValues(0); // a choice of numerics, not of speed: tune keeps the default

    private final KernelSet.Isa fixedKernels;
    private final boolean kernelsFixed;

    /** Kernels from the setting {@code GOSS_CPU_KERNELS}. */
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
        String kernels = nativeReason == null
                ? "native " + NativeCpu.best().knobValue() + " kernels"
                : "Java kernels (" + nativeReason + ")";
        return Availability.yes(
                kernels + ", "
                        + (CpuKernels.vectorApiPresent()
                                ? "Java Vector API, " + Runtime.getRuntime().availableProcessors() + " CPUs"
                                : "scalar fallback: jdk.incubator.vector is not in the boot layer (add --add-modules jdk.incubator.vector)"));
    }

    @Override
    public Backend create(BackendOptions options) {
        KernelSet.Isa isa = kernelsFixed ? fixedKernels : kernels(options);
        KernelSet kernels = KernelSet.of(isa, CpuKernels.best()).quantizingDense(DENSE.value(options) == 0);
        CpuBackend backend = new CpuBackend(threads(options), kernels);
        if (WARMUP.value(options, 1) == 1) CpuWarmUp.startOnce(kernels);
        return backend;
    }

    @Override
    public java.util.Optional<String> threadsSetting() {
        return java.util.Optional.of(THREADS.envName());
    }

    @Override
    public List<Knob> knobs() {
        return List.of(THREADS, KERNELS, DENSE, WARMUP);
    }

    /** Threads and kernels on this machine (every processor by default, the kernel families this CPU runs), and the warm-up. */
    @Override
    public List<KnobState> knobStates(BackendOptions options) {
        BackendOptions o = kernelsFixed
                ? options.with(
                        KERNELS.envName(),
                        fixedKernels == null ? "auto" : fixedKernels.knobValue(),
                        "CpuBackendProvider.withKernels")
                : options;
        int cpus = deviceThreads();
        List<Integer> threads = new ArrayList<>();
        for (int t = 1; t < cpus; t *= 2) threads.add(t);
        threads.add(cpus);
        return List.of(
                THREADS.state(o, cpus, MAX_THREADS, null).withCandidates(threads),
                KERNELS.state(o, bestKernels(), bestKernels(), kernelsLimit()).withCandidates(runnableKernels()),
                DENSE.state(o),
                WARMUP.state(o));
    }

    /** The thread count {@code options} give; a GossException naming the setting, the value and the range when invalid. */
    public static int threads(BackendOptions options) {
        return THREADS.value(options, deviceThreads());
    }

    /**
     * The kernel family {@code options} name, null for {@code auto}; a GossException naming the setting, the value
     * and the families this CPU runs when invalid.
     */
    public static KernelSet.Isa kernels(BackendOptions options) {
        int v = KERNELS.value(options, bestKernels(), bestKernels(), kernelsLimit());
        return options.get(KERNELS) == null ? null : KernelSet.Isa.parse(KERNELS.envName(), KERNELS.text(v));
    }

    private static int deviceThreads() {
        return Math.min(MAX_THREADS, Runtime.getRuntime().availableProcessors());
    }

    /** The index of the best kernel family here among {@link #KERNELS}' names. */
    private static int bestKernels() {
        return kernelsIndex(NativeCpu.best());
    }

    /** The index of {@code isa} among {@link #KERNELS}' names (the knob's value for it). */
    private static int kernelsIndex(KernelSet.Isa isa) {
        return KERNELS.allowed().names().indexOf(isa.knobValue());
    }

    /**
     * The families this CPU runs, as indices of {@link #KERNELS}' names: not simply all up to the best, since a CPU
     * with AVX-512 VNNI may lack the VEX-encoded AVX-VNNI (Ice Lake server, Zen 4).
     */
    private static List<Integer> runnableKernels() {
        List<Integer> out = new ArrayList<>();
        for (KernelSet.Isa isa : KernelSet.Isa.values()) if (NativeCpu.supports(isa)) out.add(kernelsIndex(isa));
        return out;
    }

    /** Why this CPU runs no better kernels than it does, or null when it runs them all. */
    private static String kernelsLimit() {
        return switch (NativeCpu.best()) {
            case AVX512 -> null;
            case AVXVNNI -> "this CPU lacks AVX-512 (F, BW, VL, DQ, VNNI)";
            case AVX2 -> "this CPU lacks AVX-VNNI and AVX-512 (F, BW, VL, DQ, VNNI)";
            case JAVA ->
                NativeCpu.unavailableReason() != null ? NativeCpu.unavailableReason() : "this CPU lacks AVX2 and FMA";
        };
    }
}
