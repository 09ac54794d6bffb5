package io.gossgpu.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gossgpu.GossException;
import io.gossgpu.backend.Availability;
import io.gossgpu.backend.Backend;
import io.gossgpu.backend.BackendOptions;
import io.gossgpu.backend.BackendProvider;
import io.gossgpu.backend.Knob;
import io.gossgpu.backend.KnobState;
import io.gossgpu.backend.KnobValues;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class TuneTest {
    static final Knob WG = Knob.of(
                    "fake", "SDPA", "WG", 64, KnobValues.powerOfTwo(1, 1024), "work-group size", "attention")
            .tuneValues(4, 8, 16, 32, 64, 128, 256, 512);
    static final Knob TILE =
            Knob.of("fake", "LINEAR", "TILE", 8, KnobValues.range(1, 16), "tokens per work-group", "tile");
    static final Knob FIXED = Knob.of("fake", "ATTENTION", "TG", 32, KnobValues.oneOf(32), "threads", "fixed");

    static BackendProvider provider(List<Knob> knobs) {
        return new BackendProvider() {
            public String name() {
                return "fake";
            }

            public int priority() {
                return 0;
            }

            public Availability availability() {
                return Availability.yes("fake");
            }

            public Backend create(BackendOptions o) {
                throw new UnsupportedOperationException();
            }

            public List<Knob> knobs() {
                return knobs;
            }
        };
    }

    @Test
    void aSweepStartsFromTheValueInEffectOnTheDeviceAndStaysInItsRange() {
        BackendOptions none = BackendOptions.defaults();
        // a CPU device (PoCL): default 16, not the declared 64, and work-groups of at most 128
        KnobState cpuDevice = WG.state(none, 16, 128, "the device's max work-group size is 128");
        assertEquals(
                List.of(8, 16, 32), Tune.candidates(cpuDevice, true), "quick: the value in effect and its neighbours");
        assertEquals(
                List.of(4, 8, 16, 32, 64, 128), Tune.candidates(cpuDevice, false), "nothing above the device's limit");
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

    /** A Tune run of {@link #WG} (in effect: 64; quick: 32, 64, 128) whose Bench runs are made up: no timing. */
    private record Made(Tune.Result result, String markdown, List<Integer> timed) {}

    /** The made-up t/s of the n-th run (0-based, the untimed warm-up included) of a WG value. */
    private interface Speeds {
        double of(int wg, int n);
    }

    private static Made tune(Speeds tps) {
        List<Integer> timed = new ArrayList<>();
        Map<Integer, Integer> seen = new HashMap<>();
        Tune.Timer timer = (bo, value, device) -> {
            device[0] = "made up";
            int wg = WG.state(bo.backendOptions()).value();
            timed.add(wg);
            int n = seen.merge(wg, 1, Integer::sum) - 1;
            double t = tps.of(wg, n);
            return new Tune.Trial(value, t, t, null);
        };
        ByteArrayOutputStream log = new ByteArrayOutputStream();
        Tune.Options o = new Tune.Options("fake", BackendOptions.defaults(), "model", List.of(), 4, 4, 1, true, 3);
        Tune.Result r = Tune.run(
                provider(List.of(WG)), List.of(WG), o, new PrintStream(log, true, StandardCharsets.UTF_8), timer);
        String text = log.toString(StandardCharsets.UTF_8);
        assertTrue(
                text.contains("tune: load average ") && text.contains(" at start") && text.contains(" at end"), text);
        return new Made(r, r.markdown(), timed);
    }

    /**
     * The sweep's one run of 128 was lucky (150 t/s), every later run of it is slower than 64 in effect. The
     * rounds time 64 and 128 in turns, and nothing is exported. Without the rounds, tune exported 128.
     */
    @Test
    void aPickThatLosesTheAlternatingRoundsIsNotExported() {
        Made m = tune((wg, n) -> wg == 128 ? (n == 0 ? 150 : 70) : wg == 64 ? 100 : 90);
        assertEquals(128, m.result().sweeps().getFirst().best(), "the sweep picked the lucky value");
        assertEquals(
                List.of(64, 64, 32, 64, 128, 64, 128, 64, 128, 64, 128),
                m.timed(),
                "warm-up, before, sweep, then ABABAB");
        assertFalse(m.result().recommends());
        assertFalse(m.markdown().contains("export "), m.markdown());
        assertTrue(
                m.markdown().contains("verdict: keeping the values in effect; the tuned values measured 0.70x"),
                m.markdown());
        assertTrue(m.markdown().contains("rule: " + TuneVerdict.RULE), m.markdown());
    }

    @Test
    void aPickThatWinsEveryRoundBeyondNoiseIsExported() {
        Made m = tune((wg, n) -> wg == 128 ? 120 + n : wg == 64 ? 100 - n : 90);
        assertTrue(m.result().recommends(), m.markdown());
        assertTrue(m.markdown().contains("verdict: the tuned values win, 1.2"), m.markdown());
        assertTrue(m.markdown().endsWith("export GOSS_FAKE_SDPA_WG=128\n"), m.markdown());
    }

    @Test
    void whenTheValueInEffectIsBestNothingIsTimedAgainOrExported() {
        Made m = tune((wg, n) -> wg == 64 ? 100 : 90);
        assertEquals(List.of(64, 64, 32, 64, 128), m.timed());
        assertNull(m.result().rounds());
        assertFalse(m.markdown().contains("export "), m.markdown());
        assertTrue(m.markdown().contains("nothing to change"), m.markdown());
    }
}
