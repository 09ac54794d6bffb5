package io.gossgpu.metal;

import io.gossgpu.backend.BackendOptions;
import io.gossgpu.backend.Knob;
import io.gossgpu.backend.KnobValues;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;

/**
 * Launch knobs of the Metal kernels ({@link Knob}), read from the backend's {@link BackendOptions}:
 * {@code GOSS_METAL_<KERNEL>_TG}, the threads per threadgroup of one kernel ({@link MetalKernel#threadgroup});
 * {@code GOSS_METAL_DENSE_PREFILL_MIN_T}, {@code GOSS_METAL_MOE_PREFILL_MIN_T}; and the setting {@code GOSS_METAL_NO_COPY}.
 */
final class MetalKnobs {
    private MetalKnobs() {}

    private static final String B = MetalBackendProvider.NAME;

    /** Batches of at least this many tokens take the tiled dense kernel (dense_tiled). */
    static final Knob DENSE_PREFILL_MIN_T = Knob.of(
                    B,
                    "DENSE",
                    "PREFILL_MIN_T",
                    4,
                    KnobValues.range(1, Integer.MAX_VALUE),
                    "the batch threshold",
                    "batches of at least this many tokens take the tiled dense kernel (dense_tiled)")
            .tuneValues(1, 2, 4, 8, 16, 32);

    /** Batches of at least this many tokens take the MoE grouped by expert (moe_sort, moe_*_tiled). */
    static final Knob MOE_PREFILL_MIN_T = Knob.of(
                    B,
                    "MOE",
                    "PREFILL_MIN_T",
                    4,
                    KnobValues.range(1, Integer.MAX_VALUE),
                    "a token count",
                    "batches of at least this many tokens take the MoE grouped by expert (moe_sort, moe_*_tiled)")
            .tuneValues(1, 2, 4, 8, 16, 32);

    /** Whether F32/BF16 matrices of memory-mapped checkpoints are wrapped in place (1) or copied (0). */
    static final Knob NO_COPY = Knob.setting(
            B,
            "NO_COPY",
            1,
            KnobValues.oneOf(0, 1),
            "the no-copy switch",
            "1 uses F32/BF16 matrices of memory-mapped checkpoints in place, 0 copies them");

    /** Every kernel's threadgroup knob, then the two thresholds. */
    static final List<Knob> ALL = Stream.concat(
                    Arrays.stream(MetalKernel.values()).map(k -> k.threadgroup).distinct(),
                    Stream.of(DENSE_PREFILL_MIN_T, MOE_PREFILL_MIN_T))
            .toList();
}
