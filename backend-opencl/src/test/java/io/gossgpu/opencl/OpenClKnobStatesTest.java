package io.gossgpu.opencl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gossgpu.GossException;
import io.gossgpu.backend.Backend;
import io.gossgpu.backend.BackendOptions;
import io.gossgpu.backend.Backends;
import io.gossgpu.backend.KnobState;
import io.gossgpu.conformance.RequiredBackends;
import java.util.List;
import java.util.SortedMap;
import java.util.TreeMap;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * What {@code info --backends}, {@code --verbose} and {@code tune} show for the OpenCL knobs
 * (the provider's {@link OpenClBackendProvider#knobStates}, computed without creating a backend) is what a backend
 * created with the same options runs, and the ranges are the device's.
 */
class OpenClKnobStatesTest {
    final OpenClBackendProvider provider = new OpenClBackendProvider();

    @Test
    void theStatesAreWhatTheBackendRunsAndTheRangesAreTheDevices() {
        RequiredBackends.requireAvailable(provider);
        for (BackendOptions o : List.of(
                BackendOptions.defaults(),
                BackendOptions.defaults()
                        .with(OpenClKnobs.DENSE_WG, 8)
                        .with(OpenClKnobs.ATTENTION_SPLITKEYS, 128)
                        .with(OpenClKnobs.MOE_PREFILL_MIN_T, 4))) {
            List<KnobState> states = provider.knobStates(o);
            SortedMap<String, Integer> shown = new TreeMap<>();
            states.forEach(s -> shown.put(s.knob().envName(), s.value()));
            try (Backend b = Backends.open("opencl", o)) {
                OpenClBackend cl = (OpenClBackend) b;
                assertEquals(cl.knobs(), shown, "options " + o);
                long max = OpenCl.select(OpenCl.devices(), null).maxWorkGroupSize();
                for (KnobState s : states) {
                    assertTrue(s.valid(), s.describe());
                    if (s.knob().name().equals("WG"))
                        assertTrue(
                                s.allowed()
                                                .endsWith(" to " + Math.min(1 << 20, max)
                                                        + " (the device's max work-group size is " + max + ")")
                                        && s.candidates().stream().allMatch(c -> c <= max),
                                s.describe());
                }
            }
        }
    }

    @Test
    void aValueAboveTheDevicesLimitIsFlaggedAsTheBackendRefusesIt() {
        RequiredBackends.requireAvailable(provider);
        long max = OpenCl.select(OpenCl.devices(), null).maxWorkGroupSize();
        Assumptions.assumeTrue(max < 1 << 20, "the device allows every declared work-group size");
        BackendOptions tooBig = BackendOptions.defaults().with(OpenClKnobs.DENSE_WG, (int) Long.highestOneBit(max) * 2);
        KnobState s = provider.knobStates(tooBig).stream()
                .filter(k -> k.knob().equals(OpenClKnobs.DENSE_WG))
                .findFirst()
                .orElseThrow();
        assertFalse(s.valid());
        GossException e = assertThrows(
                GossException.class, () -> Backends.open("opencl", tooBig).close());
        assertEquals(e.getMessage(), s.error());
    }
}
