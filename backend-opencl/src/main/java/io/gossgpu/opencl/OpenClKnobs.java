package io.gossgpu.opencl;

import io.gossgpu.backend.BackendOptions;
import io.gossgpu.backend.Knob;
import io.gossgpu.backend.KnobState;
import io.gossgpu.backend.KnobValues;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Launch knobs of the OpenCL kernels ({@link Knob}), {@code GOSS_OPENCL_<OP>_<KNOB>} in the backend's
 * {@link BackendOptions}, the op named as its kernel file and the same on every API (KernelVocabularyTest). Work-group sizes are powers of two no larger than the device's
 * (and each kernel's) maximum; the defaults differ between GPU and CPU devices (PoCL).
 */
final class OpenClKnobs {
    private OpenClKnobs() {}

    private static final String B = OpenClBackend.NAME;
    /** Defaults on CPU devices (PoCL), where they differ from the GPU default the knob declares. */
    private static final Map<Knob, Integer> CPU_DEFAULTS = new HashMap<>();

    private static final KnobValues WG = KnobValues.powerOfTwo(1, 1 << 20);
    private static final Integer[] WG_TUNE = {4, 8, 16, 32, 64, 128, 256, 512};

    static final Knob DENSE_WG =
            wg("DENSE", 64, 16, "work-group size of the dense matmul/matvec (dense layers, router logits, logits)");
    /** Tokens per work-group of dense.cl: tokens per tile, as CUDA's GOSS_CUDA_DENSE_TILE_T. */
    static final Knob DENSE_TILE_T = cpu(
            Knob.of(
                    B,
                    "DENSE",
                    "TILE_T",
                    8,
                    KnobValues.range(1, 16),
                    "tokens per tile",
                    "tokens per work-group of the dense kernel (the weight row read once per tile of tokens)"),
            16);

    static final Knob DENSE_VEC = Knob.of(
            B,
            "DENSE",
            "VEC",
            1,
            KnobValues.oneOf(0, 1),
            "the vector switch",
            "1 reads 4 columns per work item, 0 one");
    static final Knob RMSNORM_WG = wg("RMSNORM", 256, 16, "work-group size of RMSNorm");
    static final Knob ATTENTION_WG =
            wg("ATTENTION", 64, 16, "work-group size of attention: keys per chunk of the online softmax");
    static final Knob ATTENTION_SPLITKEYS = cpu(
            Knob.of(
                            B,
                            "ATTENTION",
                            "SPLITKEYS",
                            256,
                            KnobValues.range(0, Integer.MAX_VALUE),
                            "keys per split",
                            "split-K attention: keys per split (0 never splits)")
                    .tuneValues(0, 64, 128, 256, 512, 1024),
            0);
    static final Knob ATTENTION_SPLITBELOW = Knob.of(
                    B,
                    "ATTENTION",
                    "SPLITBELOW",
                    8,
                    KnobValues.range(0, Integer.MAX_VALUE),
                    "the split threshold",
                    "split only when heads × T work-groups are fewer than this")
            .defaultNote("8 per compute unit of the device")
            .tuneValues(64, 128, 256, 512, 1024, 4096);
    static final Knob ATTENTION_GQA = Knob.of(
            B,
            "ATTENTION",
            "GQA",
            1,
            KnobValues.oneOf(0, 1),
            "the GQA switch",
            "1 attends the query heads of a KV head together (K/V read once), 0 one head per work-group");
    static final Knob MOE_WG =
            wg("MOE", 32, 8, "work-group size of both MXFP4 MoE kernels (each work item takes 32-value blocks)");
    static final Knob MOE_TILE_T = Knob.of(
            B,
            "MOE",
            "TILE_T",
            8,
            KnobValues.range(1, 16),
            "token-slots per tile",
            "token-slots per work-group of the expert-grouped prefill MoE");
    static final Knob MOE_PREFILL_MIN_T = Knob.of(
                    B,
                    "MOE",
                    "PREFILL_MIN_T",
                    2,
                    KnobValues.range(1, Integer.MAX_VALUE),
                    "a token count",
                    "batches of at least this many tokens take the MoE grouped by expert (moe_sort, moe_*_tiled)")
            .tuneValues(1, 2, 4, 8, 16, 32);
    static final Knob ARGMAX_WG = wg("ARGMAX", 256, 16, "work-group size of the on-device argmax");

    static final List<Knob> ALL = List.of(
            DENSE_WG,
            DENSE_TILE_T,
            DENSE_VEC,
            RMSNORM_WG,
            ATTENTION_WG,
            ATTENTION_GQA,
            ATTENTION_SPLITKEYS,
            ATTENTION_SPLITBELOW,
            MOE_WG,
            MOE_TILE_T,
            MOE_PREFILL_MIN_T,
            ARGMAX_WG);

    private static Knob wg(String kernel, int gpuDefault, int cpuDefault, String description) {
        return cpu(
                Knob.of(B, kernel, "WG", gpuDefault, WG, "work-group size", description)
                        .tuneValues(WG_TUNE),
                cpuDefault);
    }

    private static Knob cpu(Knob k, int cpuDefault) {
        Knob noted = k.defaultNote(cpuDefault + " on a CPU device");
        CPU_DEFAULTS.put(noted, cpuDefault);
        return noted;
    }

    /** The default on a GPU ({@code gpu}) or CPU device. */
    static int deviceDefault(Knob k, boolean gpu) {
        return gpu ? k.defaultValue() : CPU_DEFAULTS.getOrDefault(k, k.defaultValue());
    }

    /** The default of {@link #ATTENTION_SPLITBELOW} on a device of {@code computeUnits} compute units. */
    static int splitBelowDefault(int computeUnits) {
        return 8 * Math.max(1, computeUnits);
    }

    /** A knob's value in {@code o} on a device; work-group sizes are checked against the device's limit {@code deviceMax}. */
    static int value(BackendOptions o, Knob k, boolean gpu, long deviceMax) {
        return k.value(o, deviceDefault(k, gpu), limit(k, deviceMax), why(k, deviceMax));
    }

    /** Every knob on device {@code d} with the settings {@code o}, as {@link OpenClBackend} reads them there. */
    static List<KnobState> states(BackendOptions o, OpenCl.DeviceInfo d) {
        long max = d.maxWorkGroupSize();
        return ALL.stream()
                .map(k -> k.state(
                        o,
                        k == ATTENTION_SPLITBELOW ? splitBelowDefault(d.computeUnits()) : deviceDefault(k, d.isGpu()),
                        limit(k, max),
                        why(k, max)))
                .toList();
    }

    private static int limit(Knob k, long deviceMax) {
        return k.allowed() == WG ? (int) Math.min(1 << 20, deviceMax) : Integer.MAX_VALUE;
    }

    private static String why(Knob k, long deviceMax) {
        return k.allowed() == WG ? "the device's max work-group size is " + deviceMax : null;
    }
}
