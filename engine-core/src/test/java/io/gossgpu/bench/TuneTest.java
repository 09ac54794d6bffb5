package io.gossgpu.bench;

import io.gossgpu.GossException;
import io.gossgpu.backend.Availability;
import io.gossgpu.backend.Backend;
import io.gossgpu.backend.BackendOptions;
import io.gossgpu.backend.BackendProvider;
import io.gossgpu.backend.Knob;
import io.gossgpu.backend.KnobState;
import io.gossgpu.backend.KnobValues;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class TuneTest {
    static final Knob WG = Knob.of("fake", "SDPA", "WG", 64, KnobValues.powerOfTwo(1, 1024), "work-group size", "attention")
            .tuneValues(4, 8, 16, 32, 64, 128, 256, 512);
    static final Knob TILE = Knob.of("fake", "LINEAR", "TILE", 8, KnobValues.range(1, 16), "tokens per work-group", "tile");
    static final Knob FIXED = Knob.of("fake", "ATTENTION", "TG", 32, KnobValues.oneOf(32), "threads", "fixed");

    static BackendProvider provider(List<Knob> knobs) {
        return new BackendProvider() {
            public String name() { return "fake"; }
            public int priority() { return 0; }
            public Availability availability() { return Availability.yes("fake"); }
            public Backend create(BackendOptions o) { throw new UnsupportedOperationException(); }
            public List<Knob> knobs() { return knobs; }
        };
    }

    @Test
    void aSweepStartsFromTheValueInEffectOnTheDeviceAndStaysInItsRange() {
        BackendOptions none = BackendOptions.defaults();
        // a CPU device (PoCL): default 16, not the declared 64, and work-groups of at most 128
        KnobState cpuDevice = WG.state(none, 16, 128, "the device's max work-group size is 128");
        assertEquals(List.of(8, 16, 32), Tune.candidates(cpuDevice, true), "quick: the value in effect and its neighbours");
        assertEquals(List.of(4, 8, 16, 32, 64, 128), Tune.candidates(cpuDevice, false), "nothing above the device's limit");
        assertEquals(List.of(32, 64, 128), Tune.candidates(WG.state(none), true));
        assertEquals(List.of(128, 256, 512), Tune.candidates(WG.state(none.with(WG, 512)), true));
        assertEquals(List.of(4, 8, 16), Tune.candidates(TILE.state(none), true));
        // a value set that is no candidate is timed too, in its place
        assertEquals(List.of(1, 2, 4, 8, 12, 16), Tune.candidates(TILE.state(none.with(TILE, 12)), false));
        assertEquals(List.of(8, 12, 16), Tune.candidates(TILE.state(none.with(TILE, 12)), true));
    }

    @Test
    void knobsArePickedByEitherNameAndAnUnknownOneListsTheValidOnes() {
        BackendProvider p = provider(List.of(WG, TILE, FIXED));
        assertEquals(List.of(WG, TILE), Tune.select(p, List.of()), "all with more than one candidate");
        assertEquals(List.of(TILE, WG), Tune.select(p, List.of("linear_tile", "GOSS_FAKE_SDPA_WG", "SDPA_WG")));
        GossException e = assertThrows(GossException.class, () -> Tune.select(p, List.of("MOE_WG")));
        assertEquals("unknown knob 'MOE_WG' for fake; valid: SDPA_WG, LINEAR_TILE, ATTENTION_TG", e.getMessage());
        GossException none = assertThrows(GossException.class, () -> Tune.select(provider(List.of()), List.of()));
        assertEquals("backend 'fake' has no tuning knobs (cpu, opencl, cuda and metal have)", none.getMessage());
    }
}
