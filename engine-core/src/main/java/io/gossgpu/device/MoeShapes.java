package io.gossgpu.device;

/**
 * How one API's MoE kernels spread their work over thread groups: the one part of the MoE that is still each API's
 * (its kernels map (slot, row) work to groups their own way), as data for {@link MoePipeline}. Each method gives the
 * grid of one kernel for the step's {@link MoeParams}, and {@link #local} the dynamic group memory it takes.
 */
public interface MoeShapes {
    /** A kernel's grid and dynamic group memory in bytes (0: none). */
    record Shape(Grid grid, long local) {
        public static Shape of(Grid grid) {
            return new Shape(grid, 0);
        }
    }

    /** Whether a batch of {@code p} can take the prefill kernels on this device (beyond the token threshold). */
    default boolean prefillFits(MoeParams p) {
        return true;
    }

    Shape gateUp(MoeParams p);

    Shape down(MoeParams p);

    Shape sort(MoeParams p);

    Shape gateUpTiled(MoeParams p);

    Shape downTiled(MoeParams p);

    Shape combine(MoeParams p);
}
