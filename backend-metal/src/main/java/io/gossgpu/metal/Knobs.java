package io.gossgpu.metal;

import io.gossgpu.GossException;

import java.util.Locale;

/**
 * Launch knobs: {@code GOSS_METAL_<KERNEL>_TG} (environment) or {@code goss.metal.<kernel>.tg} (system property),
 * the threads per threadgroup of one kernel; checked against the pipeline's maxTotalThreadsPerThreadgroup.
 */
final class Knobs {
    private Knobs() {}

    static String envName(String kernel) {
        return "GOSS_METAL_" + kernel.toUpperCase(Locale.ROOT) + "_TG";
    }

    static int threadgroupSize(String kernel, int defaultThreads, int maxThreads) {
        String env = envName(kernel), prop = "goss.metal." + kernel.toLowerCase(Locale.ROOT) + ".tg";
        String v = MetalNative.setting(prop, env);
        if (kernel.equals("attention")) {
            if (v != null && !v.equals("32"))
                throw new GossException(env + "=" + v + " is invalid: the attention kernel runs one simdgroup (32 threads) per (token, head)");
            return 32;
        }
        if (v == null) return Math.min(defaultThreads, maxThreads - maxThreads % 32);
        return check(kernel, v, maxThreads);
    }

    /** Parses and checks a knob value: a multiple of 32 from 32 to {@code maxThreads}. */
    static int check(String kernel, String v, int maxThreads) {
        String env = envName(kernel);
        int n;
        try {
            n = Integer.parseInt(v);
        } catch (NumberFormatException e) {
            n = -1;
        }
        if (n < 32 || n > maxThreads || n % 32 != 0)
            throw new GossException(env + "=" + v + " is invalid: threads per threadgroup must be a multiple of 32 from 32 to "
                    + maxThreads + " (the " + kernel + " pipeline's maxTotalThreadsPerThreadgroup)");
        return n;
    }

    /** A positive integer setting (environment {@code env} or system property {@code prop}), else {@code dflt}. */
    static int positive(String env, String prop, int dflt) {
        String v = MetalNative.setting(prop, env);
        if (v == null) return dflt;
        try {
            int n = Integer.parseInt(v);
            if (n >= 1) return n;
        } catch (NumberFormatException ignored) {
            // reported below
        }
        throw new GossException(env + "=" + v + " is invalid: expected a whole number of tokens, at least 1");
    }
}
