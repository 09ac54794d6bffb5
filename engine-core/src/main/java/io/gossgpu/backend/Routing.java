package io.gossgpu.backend;

/**
 * Host copy of a {@link DeviceRouting}: for token {@code t} and slot {@code j < k}, expert
 * {@code experts[t·k + j]} with weight {@code weights[t·k + j]}; slots are sorted by router logit
 * descending (ties: lower expert index first).
 */
public record Routing(int rows, int k, int[] experts, float[] weights) {
    public Routing {
        if (experts.length != rows * k || weights.length != rows * k)
            throw new IllegalArgumentException("routing arrays must hold rows*k = " + rows * k + " entries");
    }
}
