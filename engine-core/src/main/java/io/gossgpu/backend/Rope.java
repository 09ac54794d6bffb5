package io.gossgpu.backend;

import io.gossgpu.model.ModelConfig;

/**
 * RoPE frequencies with YaRN, as gpt-oss defines them, for every backend to share (in double).
 *
 * <p>{@code freq_i = theta^(2i/hd)} for {@code i < hd/2}. Without scaling ({@code factor ≤ 1}):
 * {@code invFreq_i = 1/freq_i}, concentration 1. With YaRN: concentration {@code = 0.1·ln(factor) + 1};
 * {@code d = hd/2}, {@code low = d·ln(ctx0/(β·2π))/ln(theta)}, {@code high = d·ln(ctx0/(α·2π))/ln(theta)};
 * {@code ramp_i = (i − low)/(high − low)}, {@code mask_i = 1 − clamp(ramp_i, 0, 1)};
 * {@code invFreq_i = (1/(factor·freq_i))·(1 − mask_i) + (1/freq_i)·mask_i}. At position {@code p}
 * the rotation uses {@code cos(p·invFreq_i)·concentration} and {@code sin(p·invFreq_i)·concentration}.
 */
public final class Rope {
    private Rope() {}

    public static double[] invFreq(ModelConfig c) {
        int half = c.headDim() / 2;
        double theta = c.ropeTheta(), factor = c.ropeScalingFactor();
        double[] inv = new double[half];
        double low = 0, high = 0;
        if (factor > 1) {
            low = half * Math.log(c.initialContextLength() / (c.ropeNtkBeta() * 2 * Math.PI)) / Math.log(theta);
            high = half * Math.log(c.initialContextLength() / (c.ropeNtkAlpha() * 2 * Math.PI)) / Math.log(theta);
        }
        for (int i = 0; i < half; i++) {
            double freq = Math.pow(theta, 2.0 * i / c.headDim());
            if (factor > 1) {
                double ramp = (i - low) / (high - low);
                double mask = 1 - Math.min(1, Math.max(0, ramp));
                inv[i] = (1 / (factor * freq)) * (1 - mask) + (1 / freq) * mask;
            } else {
                inv[i] = 1 / freq;
            }
        }
        return inv;
    }

    public static double concentration(ModelConfig c) {
        return c.ropeScalingFactor() > 1 ? 0.1 * Math.log(c.ropeScalingFactor()) + 1 : 1;
    }

    /**
     * cos/sin of positions {@code start .. start+count−1} as float32, concentration applied:
     * {@code table[(p − start)·hd + 2j] = (float)(cos(p·invFreq_j)·conc)}, {@code [.. + 2j + 1]} the sine,
     * for {@code j < hd/2}. Angles are computed in double: a float32 {@code p·invFreq} is off by about
     * {@code p·6e-8} rad (2e-4 at p = 3000), which the conformance kit notices. GPU backends can upload
     * this table (ctx × hd floats) instead of calling sin/cos in kernels.
     */
    public static float[] cosSinTable(ModelConfig c, int start, int count) {
        double[] inv = invFreq(c);
        double conc = concentration(c);
        int half = inv.length;
        float[] t = new float[Math.multiplyExact(count, 2 * half)];
        for (int i = 0; i < count; i++)
            for (int j = 0; j < half; j++) {
                double angle = (double) (start + i) * inv[j];
                t[i * 2 * half + 2 * j] = (float) (Math.cos(angle) * conc);
                t[i * 2 * half + 2 * j + 1] = (float) (Math.sin(angle) * conc);
            }
        return t;
    }
}
