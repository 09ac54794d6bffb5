package io.gossgpu.backend;

import io.gossgpu.GossException;
import java.util.List;
import java.util.Locale;

/**
 * One launch parameter of one GPU kernel (DESIGN.md, "Tuning knobs"), or one setting of a whole backend
 * ({@link #setting}: no kernel). Its value comes from the {@link BackendOptions} a backend is created with, under
 * the name {@code GOSS_<BACKEND>_<KERNEL>_<KNOB>} ({@link #envName()}; at the edge also the system property
 * {@code goss.<backend>.<kernel>.<knob>}, lower case, an underscore in the knob's own name becoming a dot), else
 * the default. An invalid value is a {@link GossException} naming the variable, the value and what is allowed:
 * {@code invalid GOSS_CUDA_ATTENTION_BLOCK=100: threads per block must be a multiple of 32 from 32 to 1024}.
 *
 * <p>Backends declare their knobs as constants and list them from {@link BackendProvider#knobs()}, so
 * {@code goss-gpu info} and {@code goss-gpu tune} see them without opening a device. A device may allow less
 * than the declaration (its work-group limit): the reading methods take that limit and say where it comes from.
 *
 * @param kernel      the kernel, or null for a setting of the whole backend ({@code GOSS_CPU_THREADS})
 * @param what        the quantity, as the error message names it ("threads per block")
 * @param description one line for listings
 * @param defaultNote how the default depends on the device ("16 on a CPU device"), or null
 * @param tuneValues  the values {@code goss-gpu tune} times, or null for {@link KnobValues#candidates()}
 */
public record Knob(
        String backend,
        String kernel,
        String name,
        int defaultValue,
        KnobValues allowed,
        String what,
        String description,
        String defaultNote,
        List<Integer> tuneValues) {
    public Knob {
        tuneValues = tuneValues == null ? null : List.copyOf(tuneValues);
    }

    public static Knob of(
            String backend,
            String kernel,
            String name,
            int defaultValue,
            KnobValues allowed,
            String what,
            String description) {
        return new Knob(backend, kernel, name, defaultValue, allowed, what, description, null, null);
    }

    /** A setting of the whole backend, not of one kernel: {@code GOSS_<BACKEND>_<NAME>}. */
    public static Knob setting(
            String backend, String name, int defaultValue, KnobValues allowed, String what, String description) {
        return new Knob(backend, null, name, defaultValue, allowed, what, description, null, null);
    }

    /** This knob with a note on how its default depends on the device. */
    public Knob defaultNote(String note) {
        return new Knob(backend, kernel, name, defaultValue, allowed, what, description, note, tuneValues);
    }

    /** This knob with the values {@code tune} should time. */
    public Knob tuneValues(Integer... values) {
        return new Knob(backend, kernel, name, defaultValue, allowed, what, description, defaultNote, List.of(values));
    }

    /** {@code GOSS_CUDA_ATTENTION_BLOCK}. */
    public String envName() {
        return ("GOSS_" + backend + "_" + shortName()).toUpperCase(Locale.ROOT);
    }

    /** {@code goss.cuda.attention.block}. */
    public String propertyName() {
        return ("goss." + backend + "." + (kernel == null ? "" : kernel + ".") + name.replace('_', '.'))
                .toLowerCase(Locale.ROOT);
    }

    /** {@code ATTENTION_BLOCK}: the name without the backend, as {@code tune --knob} accepts it. */
    public String shortName() {
        return ((kernel == null ? "" : kernel + "_") + name).toUpperCase(Locale.ROOT);
    }

    /** The value in {@code options} with the declared default and range. */
    public int value(BackendOptions options) {
        return value(options, defaultValue, Integer.MAX_VALUE, null);
    }

    /** The value in {@code options} with a device's default. */
    public int value(BackendOptions options, int deviceDefault) {
        return value(options, deviceDefault, Integer.MAX_VALUE, null);
    }

    /**
     * The value in {@code options} on a device that allows at most {@code limit} ({@code why}: where the limit
     * comes from, for the message, or null). Unset: the default, lowered to what the device allows.
     */
    public int value(BackendOptions options, int deviceDefault, int limit, String why) {
        String v = options.get(this);
        return v == null
                ? Math.min(deviceDefault, allowed.largestUpTo(limit))
                : parse(v, limit, why, options.property(envName()));
    }

    /** Parses and checks {@code value}; a {@link GossException} naming the knob, the value and the range when invalid. */
    public int parse(String value, int limit, String why) {
        return parse(value, limit, why, null);
    }

    /** {@link #parse(String, int, String)}, the error naming {@code property} when a system property set the value. */
    private int parse(String value, int limit, String why, String property) {
        Integer n = allowed.parse(value);
        if (n != null && allowed.accepts(n, limit)) return n;
        throw invalid(value.strip(), allowed.describe(limit) + (why == null ? "" : " (" + why + ")"), property);
    }

    /** How {@code value} is written in a setting: the number, or the name of a {@link KnobValues#named} knob. */
    public String text(int value) {
        return allowed.text(value);
    }

    /** The error for {@code value} when the device allows at most {@code limit}. */
    public GossException invalid(String value, int limit, String why) {
        return invalid(value, allowed.describe(limit) + (why == null ? "" : " (" + why + ")"));
    }

    /** The error for {@code value}: "invalid ENV=value: {what} must be {mustBe}". */
    public GossException invalid(String value, String mustBe) {
        return invalid(value, mustBe, null);
    }

    /** "invalid ENV=value (set as -Dproperty=value): ..." when the system property {@code property} set it. */
    private GossException invalid(String value, String mustBe, String property) {
        String via = property == null ? "" : " (set as -D" + property + "=" + value + ")";
        return new GossException("invalid " + envName() + "=" + value + via + ": " + what + " must be " + mustBe);
    }

    /** The values {@code tune} times. */
    public List<Integer> candidates() {
        return tuneValues != null ? tuneValues : allowed.candidates();
    }

    /** {@link #state(BackendOptions, int, int, String)} with the declared default and range. */
    public KnobState state(BackendOptions options) {
        return state(options, defaultValue, Integer.MAX_VALUE, null);
    }

    /**
     * This knob on a device ({@link #value(BackendOptions, int, int, String)}'s arguments): the value a backend
     * created with {@code options} there runs with, where it comes from, what the device allows, and the values
     * {@code tune} times there (the candidates the device accepts). Never throws: an invalid setting is in the state.
     */
    public KnobState state(BackendOptions options, int deviceDefault, int limit, String why) {
        String allowedHere = allowed.describe(limit) + (why == null ? "" : " (" + why + ")");
        List<Integer> here =
                candidates().stream().filter(c -> allowed.accepts(c, limit)).toList();
        String set = options.get(this);
        try {
            int v = value(options, deviceDefault, limit, why);
            String source = set != null
                    ? options.source(envName())
                    : v == defaultValue
                            ? "default"
                            : "device default" + (defaultNote == null ? "" : ": " + defaultNote);
            return new KnobState(this, v, text(v), source, allowedHere, null, here);
        } catch (GossException e) {
            return new KnobState(this, defaultValue, set, options.source(envName()), allowedHere, e.getMessage(), here);
        }
    }
}
