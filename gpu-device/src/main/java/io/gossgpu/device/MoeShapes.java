package io.gossgpu.device;

import java.util.function.Function;
import java.util.function.Predicate;

/**
 * How one API's MoE kernels spread their work over thread groups, as data for {@link MoePipeline}: the one part of the
 * MoE that is still each API's (its kernels map (slot, row) work to groups their own way). Each function gives one
 * kernel's grid and dynamic group memory for the step's {@link MoeParams}.
 *
 * @param prefillFits whether a batch can take the prefill kernels on this device at all (beyond the token threshold)
 * @param mma         whether the device runs the tiled expert GEMMs on tensor cores: {@link MoePipeline#GATE_UP_MMA} and
 *                    {@link MoePipeline#DOWN_MMA} in place of moe_gate_up_tiled and moe_down_tiled, with the same buffers,
 *                    grids and params (CUDA on compute capability 8.0 and up unless {@code GOSS_CUDA_MOE_MMA=0}; no other
 *                    API has them)
 */
public record MoeShapes(
        Function<MoeParams, Shape> gateUp,
        Function<MoeParams, Shape> down,
        Function<MoeParams, Shape> sort,
        Function<MoeParams, Shape> gateUpTiled,
        Function<MoeParams, Shape> downTiled,
        Function<MoeParams, Shape> combine,
        Predicate<MoeParams> prefillFits,
        boolean mma) {

    /** The shapes of an API without tensor-core kernels. */
    public MoeShapes(
            Function<MoeParams, Shape> gateUp,
            Function<MoeParams, Shape> down,
            Function<MoeParams, Shape> sort,
            Function<MoeParams, Shape> gateUpTiled,
            Function<MoeParams, Shape> downTiled,
            Function<MoeParams, Shape> combine,
            Predicate<MoeParams> prefillFits) {
        this(gateUp, down, sort, gateUpTiled, downTiled, combine, prefillFits, false);
    }

    /** A kernel's grid and dynamic group memory in bytes (0: none). */
    public record Shape(Grid grid, long local) {
        public static Shape of(Grid grid) {
            return new Shape(grid, 0);
        }
    }
}
