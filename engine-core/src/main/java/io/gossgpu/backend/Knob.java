package io.gossgpu.backend;

import io.gossgpu.GossException;

import java.util.List;
import java.util.Locale;

/**
 * One launch parameter of one GPU kernel (DESIGN.md, "Tuning knobs"): read from the system property
 * {@code goss.<backend>.<kernel>.<knob>} (lower case; an underscore in the knob's own name becomes a dot),
 * else the environment variable {@code GOSS_<BACKEND>_<KERNEL>_<KNOB>}, else the default. An invalid value
 * is a {@link GossException} naming the variable, the value and what is allowed:
 * {@code invalid GOSS_CUDA_SDPA_BLOCK=100: threads per block must be a multiple of 32 from 32 to 1024}.
 *
 * <p>Backends declare their knobs as constants and list them from {@link BackendProvider#knobs()}, so
 * {@code goss-gpu info} and {@code goss-gpu tune} see them without opening a device. A device may allow less
 * than the declaration (its work-group limit): the reading methods take that limit and say where it comes from.
 *
 * @param what        the quantity, as the error message names it ("threads per block")
 * @param description one line for listings
 * @param defaultNote how the default depends on the device ("16 on a CPU device"), or null
 * @param tuneValues  the values {@code goss-gpu tune} times, or null for {@link KnobValues#candidates()}
 */
public record Knob(String backend, String kernel, String name, int defaultValue, KnobValues allowed, String what,
                   String description, String defaultNote, List<Integer> tuneValues) {
    public Knob {
        tuneValues = tuneValues == null ? null : List.copyOf(tuneValues);
    }

    public static Knob of(String backend, String kernel, String name, int defaultValue, KnobValues allowed, String what,
                          String description) {
        return new Knob(backend, kernel, name, defaultValue, allowed, what, description, null, null);
    }

    /** This knob with a note on how its default depends on the device. */
    public Knob defaultNote(String note) {
        return new Knob(backend, kernel, name, defaultValue, allowed, what, description, note, tuneValues);
    }

    /** This knob with the values {@code tune} should time. */
    public Knob tuneValues(Integer... values) {
        return new Knob(backend, kernel, name, defaultValue, allowed, what, description, defaultNote, List.of(values));
    }

    /** {@code GOSS_CUDA_SDPA_BLOCK}. */
    public String envName() {
        return ("GOSS_" + backend + "_" + kernel + "_" + name).toUpperCase(Locale.ROOT);
    }

    /** {@code goss.cuda.sdpa.block}. */
    public String propertyName() {
        return ("goss." + backend + "." + kernel + "." + name.replace('_', '.')).toLowerCase(Locale.ROOT);
    }

    /** {@code SDPA_BLOCK}: the name without the backend, as {@code tune --knob} accepts it. */
    public String shortName() {
        return (kernel + "_" + name).toUpperCase(Locale.ROOT);
    }

    /** The setting (property, else environment), trimmed, or null when neither is set. */
    public String raw() {
        String p = System.getProperty(propertyName());
        if (p != null && !p.isBlank()) return p.strip();
        String e = System.getenv(envName());
        return e == null || e.isBlank() ? null : e.strip();
    }

    /** The value in effect with the declared default and range. */
    public int value() {
        return value(defaultValue, Integer.MAX_VALUE, null);
    }

    /** The value in effect with a device's default. */
    public int value(int deviceDefault) {
        return value(deviceDefault, Integer.MAX_VALUE, null);
    }

    /**
     * The value in effect on a device that allows at most {@code limit} ({@code why}: where the limit comes
     * from, for the message, or null). Unset: the default, lowered to what the device allows.
     */
    public int value(int deviceDefault, int limit, String why) {
        String v = raw();
        return v == null ? Math.min(deviceDefault, allowed.largestUpTo(limit)) : parse(v, limit, why);
    }

    /** Parses and checks {@code value}; a {@link GossException} naming the knob, the value and the range when invalid. */
    public int parse(String value, int limit, String why) {
        int n;
        try {
            n = Integer.parseInt(value.strip());
        } catch (NumberFormatException e) {
            throw invalid(value, limit, why);
        }
        if (!allowed.accepts(n, limit)) throw invalid(value, limit, why);
        return n;
    }

    /** The error for {@code value} when the device allows at most {@code limit}. */
    public GossException invalid(String value, int limit, String why) {
        return invalid(value, allowed.describe(limit) + (why == null ? "" : " (" + why + ")"));
    }

    /**
     * The error for {@code value}: "invalid ENV=value: {what} must be {mustBe}", or
     * "invalid ENV=value (set as -Dproperty=value): ..." when the system property is what set it.
     */
    public GossException invalid(String value, String mustBe) {
        String p = System.getProperty(propertyName());
        String via = p != null && !p.isBlank() ? " (set as -D" + propertyName() + "=" + value + ")" : "";
        return new GossException("invalid " + envName() + "=" + value + via + ": " + what + " must be " + mustBe);
    }

    /** The values {@code tune} times. */
    public List<Integer> candidates() {
        return tuneValues != null ? tuneValues : allowed.candidates();
    }

    /** "GOSS_CUDA_SDPA_BLOCK = 128 (default)  threads per block of attention; a multiple of 32 from 32 to 1024". */
    public String describeCurrent() {
        String v = raw();
        String now = v != null ? v + " (set)" : defaultValue + " (default" + (defaultNote == null ? "" : "; " + defaultNote) + ")";
        return envName() + " = " + now + "  " + description + "; " + allowed.describe(Integer.MAX_VALUE);
    }
}
