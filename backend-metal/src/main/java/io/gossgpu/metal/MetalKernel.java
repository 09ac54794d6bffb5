package io.gossgpu.metal;

import io.gossgpu.backend.BackendOptions;
import io.gossgpu.backend.Knob;
import io.gossgpu.backend.KnobValues;
import java.util.Locale;

/**
 * The kernels of {@code backend-metal/kernels} that the backend dispatches, each with its threadgroup-size knob
 * ({@code GOSS_METAL_<KERNEL>_TG}): a kernel's name is written here once and in its {@code KERNEL(name)} line once.
 */
enum MetalKernel {
    EMBED(256),
    RMSNORM(256),
    DENSE(256),
    DENSE_TILED(128),
    ROPE(256),
    /** One simdgroup per (token, head): its size is fixed. */
    ATTENTION(
            32,
            "one simdgroup per (token, head)",
            "the attention kernel runs one simdgroup (32 threads) per (token, head)"),
    KV_STORE(256),
    /** A thread per 32-number block of a row of k and v. */
    KV_ROUND(256),
    TOPK_SOFTMAX(64),
    MOE_GATE_UP(256),
    MOE_DOWN(256),
    MOE_SORT(64),
    MOE_GATE_UP_TILED(128),
    MOE_DOWN_TILED(128),
    MOE_COMBINE(256),
    ADD(256),
    ARGMAX(256),
    /** Launched in rmsnorm's shape (SmallOps): rmsnorm's threadgroup size and knob. */
    ADD_RMSNORM(RMSNORM);

    /** The function name in the Metal library. */
    final String function;
    /** Threads per threadgroup: a multiple of 32 up to 1024, checked against the pipeline's maxTotalThreadsPerThreadgroup. */
    final Knob threadgroup;
    /** Why a value above the largest allowed is refused. */
    private final String limit;

    /** A kernel whose threadgroup size is tunable. */
    MetalKernel(int defaultThreads) {
        function = name().toLowerCase(Locale.ROOT);
        threadgroup = Knob.of(
                        MetalBackendProvider.NAME,
                        function,
                        "TG",
                        defaultThreads,
                        KnobValues.multipleOf(32, 32, 1024),
                        "threads per threadgroup",
                        "threads per threadgroup of " + function)
                .tuneValues(32, 64, 128, 256, 512, 1024);
        limit = "the " + function + " pipeline's maxTotalThreadsPerThreadgroup";
    }

    /** A kernel written for exactly {@code threads} per threadgroup ({@code layout}), which no knob changes. */
    MetalKernel(int threads, String layout, String limit) {
        function = name().toLowerCase(Locale.ROOT);
        threadgroup = Knob.of(
                MetalBackendProvider.NAME,
                function,
                "TG",
                threads,
                KnobValues.oneOf(threads),
                "threads per threadgroup",
                "threads per threadgroup of " + function + ": " + layout + ", fixed");
        this.limit = limit;
    }

    /** A kernel launched in {@code same}'s shape: its threadgroup knob. */
    MetalKernel(MetalKernel same) {
        function = name().toLowerCase(Locale.ROOT);
        threadgroup = same.threadgroup;
        limit = "the " + function + " pipeline's maxTotalThreadsPerThreadgroup";
    }

    /** Threads per threadgroup in {@code o}, for a pipeline that allows at most {@code maxThreads}. */
    int threads(BackendOptions o, int maxThreads) {
        return threadgroup.value(o, threadgroup.defaultValue(), maxThreads, limit);
    }
}
