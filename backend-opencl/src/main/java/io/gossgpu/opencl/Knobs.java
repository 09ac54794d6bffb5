package io.gossgpu.opencl;

import io.gossgpu.GossException;

import java.util.Locale;

/**
 * Launch knobs of the OpenCL kernels: {@code GOSS_OPENCL_<KERNEL>_<KNOB>} in the environment or
 * {@code goss.opencl.<kernel>.<knob>} as a system property (the property wins). Invalid values are a
 * {@link GossException} naming the knob, the value and the allowed range (the device limit included).
 *
 * <table>
 *   <caption>Knobs</caption>
 *   <tr><td>LINEAR_WG</td><td>work-group size of the dense matmul/matvec (linear, router logits, logits)</td></tr>
 *   <tr><td>LINEAR_TILE</td><td>tokens per work-group of the dense matmul (1..16; weight reuse in prefill)</td></tr>
 *   <tr><td>RMSNORM_WG</td><td>work-group size of RMSNorm</td></tr>
 *   <tr><td>SDPA_WG</td><td>work-group size of attention: keys per chunk of the online softmax</td></tr>
 *   <tr><td>SDPA_GQA</td><td>1: the query heads of a KV head in one work-group (K/V read once); 0: one per head</td></tr>
 *   <tr><td>SDPA_SPLITKEYS</td><td>split-K attention: keys per split (0 = never split; CPU default)</td></tr>
 *   <tr><td>SDPA_SPLITBELOW</td><td>split only when heads × T work-groups are fewer than this</td></tr>
 *   <tr><td>MOE_TILE</td><td>token-slots per work-group of the expert-grouped prefill MoE (1..16)</td></tr>
 *   <tr><td>MOE_GROUPMIN</td><td>smallest batch that takes the expert-grouped MoE</td></tr>
 *   <tr><td>MOE_WG</td><td>work-group size of both MXFP4 MoE kernels (each work item takes 32-value blocks)</td></tr>
 *   <tr><td>ARGMAX_WG</td><td>work-group size of the on-device argmax</td></tr>
 * </table>
 * Work-group sizes must be powers of two no larger than the device's (and the kernel's) maximum.
 */
final class Knobs {
    private Knobs() {}

    static String envName(String kernel, String knob) {
        return "GOSS_OPENCL_" + kernel.toUpperCase(Locale.ROOT) + "_" + knob.toUpperCase(Locale.ROOT);
    }

    static String propertyName(String kernel, String knob) {
        return "goss.opencl." + kernel.toLowerCase(Locale.ROOT) + "." + knob.toLowerCase(Locale.ROOT);
    }

    /** The raw setting, or null when neither the property nor the variable is set. */
    static String raw(String kernel, String knob) {
        String p = System.getProperty(propertyName(kernel, knob));
        if (p != null && !p.isBlank()) return p.trim();
        String e = System.getenv(envName(kernel, knob));
        return e == null || e.isBlank() ? null : e.trim();
    }

    /** An integer knob in {@code [min, max]}; {@code limit} says where max comes from. */
    static int integer(String kernel, String knob, int def, int min, int max, String limit) {
        String v = raw(kernel, knob);
        if (v == null) return def;
        int n;
        try {
            n = Integer.parseInt(v);
        } catch (NumberFormatException e) {
            throw invalid(kernel, knob, v, "an integer in " + min + ".." + max + " (" + limit + ")");
        }
        if (n < min || n > max) throw invalid(kernel, knob, v, "an integer in " + min + ".." + max + " (" + limit + ")");
        return n;
    }

    /** A work-group size knob: a power of two in {@code [1, deviceMax]}. */
    static int workGroup(String kernel, int def, long deviceMax) {
        int max = (int) Math.min(1 << 20, deviceMax);
        String v = raw(kernel, "WG");
        if (v == null) return (int) Math.min(def, Integer.highestOneBit(max));
        int n;
        try {
            n = Integer.parseInt(v);
        } catch (NumberFormatException e) {
            n = -1;
        }
        if (n < 1 || n > max || Integer.bitCount(n) != 1)
            throw invalid(kernel, "WG", v, "a power of two from 1 to " + max + " (the device's max work-group size is " + deviceMax + ")");
        return n;
    }

    static GossException invalid(String kernel, String knob, String value, String allowed) {
        return new GossException(envName(kernel, knob) + " (" + propertyName(kernel, knob) + ") = '" + value
                + "' is invalid: it must be " + allowed);
    }
}
