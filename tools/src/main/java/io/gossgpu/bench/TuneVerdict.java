package io.gossgpu.bench;

import java.util.Locale;

/**
 * Whether tune's recommendation beats the settings it started from by more than the noise. The sweep picks each knob's
 * best from one short run per value, so on a machine whose speed drifts (other processes, a VM beside noisy neighbours)
 * its pick can be slower than where it started; {@code tune --quick} once exported settings its own check measured at
 * 0.63-0.75x. So both settings are timed again in the same run, in turns (start, tuned, start, tuned, ...), and each
 * round gives the ratio of their scores (the geometric mean of prefill and decode t/s).
 *
 * <p>The rule: keep the tuned settings only when, over at least {@link #MIN_ROUNDS} rounds, every round measured them
 * faster, the geometric mean of the ratios is at least {@code 1 +} {@link #MIN_GAIN}, and the 95 % confidence interval
 * of that mean (Student's t over the rounds' log ratios) lies above 1.0. Otherwise the starting settings stay.
 *
 * @param keepTuned whether the tuned settings won by the rule
 * @param ratio     the geometric mean over the rounds of tuned / starting score
 * @param low       the lower end of the ratio's 95 % confidence interval (0 with fewer than 2 rounds)
 * @param high      the upper end (infinite with fewer than 2 rounds)
 * @param rounds    rounds timed
 * @param faster    rounds in which the tuned settings were faster
 */
public record TuneVerdict(boolean keepTuned, double ratio, double low, double high, int rounds, int faster) {
    /** The smallest gain worth a setting: below it, the defaults stay even when the gain is real. */
    public static final double MIN_GAIN = 0.05;
    /** Fewer rounds than this cannot show that a gain is more than noise. */
    public static final int MIN_ROUNDS = 3;

    /** The rule in words, for tune's output. */
    public static final String RULE = String.format(
            Locale.ROOT,
            "the tuned values are kept when, over at least %d alternating rounds, "
                    + "each round measured them faster, the mean gain is at least %.0f%% and the 95%% confidence interval of the ratio lies above 1.0",
            MIN_ROUNDS,
            MIN_GAIN * 100);

    /** Two-sided 95 % Student t quantiles for 1 to 10 degrees of freedom; above 10 the value for 10 (a little wide). */
    private static final double[] T95 = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228};

    /**
     * The verdict on paired scores: {@code start[i]} and {@code tuned[i]} were timed in round {@code i}, one after the
     * other. A score of 0 or less (a run that failed) counts as a round the tuned settings lost.
     */
    public static TuneVerdict decide(double[] start, double[] tuned) {
        if (start.length != tuned.length)
            throw new IllegalArgumentException(start.length + " starting scores, " + tuned.length + " tuned");
        int n = start.length, faster = 0;
        if (n == 0) return new TuneVerdict(false, Double.NaN, 0, Double.POSITIVE_INFINITY, 0, 0);
        double[] logs = new double[n];
        boolean failed = false;
        for (int i = 0; i < n; i++) {
            if (!(start[i] > 0) || !(tuned[i] > 0)) {
                failed = true;
                logs[i] = 0;
                continue;
            }
            logs[i] = Math.log(tuned[i] / start[i]);
            if (tuned[i] > start[i]) faster++;
        }
        double mean = 0;
        for (double l : logs) mean += l;
        mean /= n;
        double low = 0, high = Double.POSITIVE_INFINITY;
        if (n >= 2) {
            double ss = 0;
            for (double l : logs) ss += (l - mean) * (l - mean);
            double half = T95[Math.min(n - 1, T95.length) - 1] * Math.sqrt(ss / (n - 1) / n);
            low = Math.exp(mean - half);
            high = Math.exp(mean + half);
        }
        double ratio = Math.exp(mean);
        boolean keep = !failed && n >= MIN_ROUNDS && faster == n && ratio >= 1 + MIN_GAIN && low > 1.0;
        return new TuneVerdict(keep, ratio, low, high, n, faster);
    }

    /** e.g. "1.12x (95% CI 1.06x to 1.18x), faster in 3 of 3 rounds". */
    public String describe() {
        String ci = rounds >= 2 ? String.format(Locale.ROOT, " (95%% CI %.2fx to %.2fx)", low, high) : "";
        return String.format(Locale.ROOT, "%.2fx%s, faster in %d of %d rounds", ratio, ci, faster, rounds);
    }
}
