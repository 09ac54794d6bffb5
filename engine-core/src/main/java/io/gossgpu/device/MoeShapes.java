package io.gossgpu.device;

import java.util.function.Function;
import java.util.function.Predicate;

/**
 * How one API's MoE kernels spread their work over thread groups, as data for {@link MoePipeline}: the one part of the
 * MoE that is still each API's (its kernels map (slot, row) work to groups their own way). Each function gives one
 * kernel's grid and dynamic group memory for the step's {@link MoeParams}.
 *
 * @param prefillFits whether a batch can take the prefill kernels on this device at all (beyond the token threshold)
 */
public record MoeShapes(Function<MoeParams, Shape> gateUp, Function<MoeParams, Shape> down, Function<MoeParams, Shape> sort,
                        Function<MoeParams, Shape> gateUpTiled, Function<MoeParams, Shape> downTiled,
                        Function<MoeParams, Shape> combine, Predicate<MoeParams> prefillFits) {

    /** A kernel's grid and dynamic group memory in bytes (0: none). */
    public record Shape(Grid grid, long local) {
        public static Shape of(Grid grid) {
            return new Shape(grid, 0);
        }
    }
}
