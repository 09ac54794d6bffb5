package io.gossgpu.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The rule that keeps or drops tune's pick, on made-up scores: nothing here is timed. */
class TuneVerdictTest {
    @Test
    void aConsistentGainWellAboveTheNoiseIsKept() {
        TuneVerdict v =
                TuneVerdict.decide(new double[] {100, 98, 103, 101, 99}, new double[] {121, 117, 125, 120, 118});
        assertTrue(v.keepTuned(), v.describe());
        assertEquals(1.2, v.ratio(), 0.01);
        assertTrue(v.low() > 1.15 && v.high() < 1.25, v.describe());
        assertEquals(5, v.faster());
    }

    /** Runs once reported: the pick measured 0.63-0.75x of the defaults in tune's own check. */
    @Test
    void aPickThatIsSlowerInTheRoundsIsDropped() {
        TuneVerdict v = TuneVerdict.decide(new double[] {100, 100, 100}, new double[] {63, 75, 70});
        assertFalse(v.keepTuned(), v.describe());
        assertEquals(0, v.faster());
        assertTrue(v.high() < 1, v.describe());
    }

    @Test
    void aGainThatOneRoundContradictsIsDropped() {
        // the mean says 1.12x, but one round of three had the defaults ahead: noise, not a gain
        TuneVerdict v = TuneVerdict.decide(new double[] {100, 100, 100}, new double[] {130, 95, 115});
        assertFalse(v.keepTuned(), v.describe());
        assertTrue(v.ratio() > 1.05 && v.low() < 1, v.describe());
    }

    @Test
    void aGainEachRoundShowsButWhoseIntervalReachesOneIsDropped() {
        TuneVerdict v = TuneVerdict.decide(new double[] {100, 100, 100}, new double[] {101, 140, 102});
        assertEquals(3, v.faster());
        assertTrue(v.ratio() >= 1.05, v.describe());
        assertFalse(v.low() > 1, v.describe());
        assertFalse(v.keepTuned(), v.describe());
    }

    @Test
    void aSteadyGainBelowFivePercentIsNotWorthASetting() {
        TuneVerdict v = TuneVerdict.decide(new double[] {100, 100, 100, 100}, new double[] {103, 103.2, 102.9, 103.1});
        assertTrue(v.low() > 1 && v.faster() == 4, v.describe());
        assertFalse(v.keepTuned(), v.describe());
    }

    @Test
    void tooFewRoundsOrAFailedRunKeepTheDefaults() {
        assertFalse(
                TuneVerdict.decide(new double[] {100, 100}, new double[] {150, 151})
                        .keepTuned(),
                "two rounds are not enough");
        assertFalse(TuneVerdict.decide(new double[] {100}, new double[] {200}).keepTuned());
        assertFalse(TuneVerdict.decide(new double[] {}, new double[] {}).keepTuned());
        assertFalse(
                TuneVerdict.decide(new double[] {100, 100, 100}, new double[] {150, 0, 150})
                        .keepTuned(),
                "a tuned run failed");
        assertTrue(TuneVerdict.decide(new double[] {100, 100, 100}, new double[] {150, 152, 149})
                .keepTuned());
    }
}
