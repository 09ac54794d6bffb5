package io.gossgpu.backend;

import java.util.List;

/**
 * One {@link Knob} on one device, as a backend created there with some {@link BackendOptions} runs it
 * ({@link BackendProvider#knobStates}): what {@code goss-gpu info --backends}, {@code --verbose} and {@code tune} show.
 *
 * @param value      the value in effect (meaningless when {@code error} is set)
 * @param text       how it is written: the number, the name of a named knob, or the invalid text as set
 * @param source     where it came from: {@code default}, {@code device default[: how]}, {@code environment},
 *                   {@code -Dgoss.…}, {@code code}, or a command-line flag ({@link BackendOptions#source})
 * @param allowed    what the device allows ("a power of two from 1 to 4096 (the device's max work-group size is 4096)")
 * @param error      the one-line error a backend would fail with for the value as set, or null when it is valid
 * @param candidates the values {@code tune} times on this device
 */
public record KnobState(
        Knob knob, int value, String text, String source, String allowed, String error, List<Integer> candidates) {
    public KnobState {
        candidates = List.copyOf(candidates);
    }

    public boolean valid() {
        return error == null;
    }

    /** This state with {@code tune} timing {@code values} on this device instead. */
    public KnobState withCandidates(List<Integer> values) {
        return new KnobState(knob, value, text, source, allowed, error, values);
    }

    /** {@code GOSS_CPU_THREADS=2 (device default)}, or {@code GOSS_X=33 (environment; INVALID)}. */
    public String brief() {
        return knob.envName() + "=" + text + " (" + source + (valid() ? "" : "; INVALID") + ")";
    }

    /**
     * {@code GOSS_OPENCL_DENSE_WG = 16 (device default: 16 on a CPU device)  work-group size of …; a power of two
     * from 1 to 4096 (…)}; an invalid setting ends with {@code INVALID: work-group size must be …} instead.
     */
    public String describe() {
        String head = knob.envName() + " = " + text + " (" + source + ")  " + knob.description() + "; ";
        return valid() ? head + allowed : head + "INVALID: " + knob.what() + " must be " + allowed;
    }
}
