package io.gossgpu.metal;

import io.gossgpu.GossException;
import io.gossgpu.backend.BackendOptions;
import io.gossgpu.backend.Knob;
import io.gossgpu.backend.KnobValues;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Launch knobs of the Metal kernels ({@link Knob}), read from the backend's {@link BackendOptions}:
 * {@code GOSS_METAL_<KERNEL>_TG}, the threads per threadgroup of one kernel, a multiple of 32 checked
 * against the pipeline's maxTotalThreadsPerThreadgroup; {@code GOSS_METAL_PREFILL_MIN_T}; and the setting
 * {@code GOSS_METAL_NO_COPY}.
 */
final class Knobs {
    private Knobs() {}

    private static final String B = MetalBackendProvider.NAME;
    private static final Map<String, Knob> TG = new LinkedHashMap<>();

    static {
        tg("embed", 256);
        tg("rmsnorm", 256);
        tg("dense", 256);
        tg("dense_tiled", 128);
        tg("rope", 256);
        TG.put("attention", Knob.of(B, "attention", "TG", 32, KnobValues.oneOf(32), "threads per threadgroup",
                "threads per threadgroup of attention: one simdgroup per (token, head), fixed"));
        tg("kv_store", 256);
        tg("topk_softmax", 64);
        tg("moe_gate_up", 256);
        tg("moe_down", 256);
        tg("moe_sort", 64);
        tg("moe_gate_up_tiled", 128);
        tg("moe_down_tiled", 128);
        tg("moe_combine", 256);
        tg("add", 256);
        tg("argmax", 256);
    }

    /** Batches of at least this many tokens take the tiled prefill kernels. */
    static final Knob PREFILL_MIN_T = Knob.of(B, "prefill", "MIN_T", 4, KnobValues.range(1, Integer.MAX_VALUE), "the batch threshold",
            "batches of at least this many tokens take the tiled prefill kernels").tuneValues(1, 2, 4, 8, 16, 32);

    /** Whether F32/BF16 matrices of memory-mapped checkpoints are wrapped in place (1) or copied (0). */
    static final Knob NO_COPY = Knob.setting(B, "NO_COPY", 1, KnobValues.oneOf(0, 1), "the no-copy switch",
            "1 uses F32/BF16 matrices of memory-mapped checkpoints in place, 0 copies them");

    static final List<Knob> ALL = java.util.stream.Stream.concat(TG.values().stream(), java.util.stream.Stream.of(PREFILL_MIN_T)).toList();

    private static void tg(String kernel, int def) {
        TG.put(kernel, Knob.of(B, kernel, "TG", def, KnobValues.multipleOf(32, 32, 1024), "threads per threadgroup",
                "threads per threadgroup of " + kernel).tuneValues(32, 64, 128, 256, 512, 1024));
    }

    /** The threadgroup-size knob of {@code kernel}. */
    static Knob tg(String kernel) {
        Knob k = TG.get(kernel);
        if (k == null) throw new GossException("metal: kernel " + kernel + " has no declared threadgroup knob");
        return k;
    }

    /** Threads per threadgroup of {@code kernel} in {@code o}, whose pipeline allows at most {@code maxThreads}. */
    static int threadgroupSize(BackendOptions o, String kernel, int maxThreads) {
        String why = kernel.equals("attention") ? "the attention kernel runs one simdgroup (32 threads) per (token, head)"
                : "the " + kernel + " pipeline's maxTotalThreadsPerThreadgroup";
        return tg(kernel).value(o, tg(kernel).defaultValue(), maxThreads, why);
    }
}
