package io.gossgpu.cpu;

import io.gossgpu.cpu.compute.CpuPool;

/**
 * What the cpu backend's pool jobs are counted under when profiled ({@link CpuBackend#profile}, {@code bench
 * --op-times}): the MoE's two weight-reading phases apart from everything else, so that a decode profile can give the
 * experts' gate/up and down matrices a row each. The ordinal is the pool's tag.
 */
public enum CpuJobTag {
    /** Every job not named below. */
    OTHER,
    /** The active experts' gate and up products (with SwiGLU). */
    MOE_GATE_UP,
    /** The active experts' down products. */
    MOE_DOWN;

    static {
        if (values().length > CpuPool.TAGS) throw new AssertionError("more job tags than the pool counts");
    }

    public int tag() {
        return ordinal();
    }
}
