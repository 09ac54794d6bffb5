package io.gossgpu.server;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Stop sequences in streamed text: nothing of a stop sequence is ever passed on, nothing else is held forever. */
class StopMatcherTest {
    @Test
    void cutsAStopSplitAcrossDeltas() {
        StopMatcher m = new StopMatcher(List.of("END"));
        assertEquals("Hello ", m.accept("Hello E"));
        assertEquals("", m.accept("N"));
        assertEquals("", m.accept("D and more"));
        assertTrue(m.stopped());
        assertEquals("", m.flush());
    }

    @Test
    void releasesWhatTurnsOutNotToBeAStop() {
        StopMatcher m = new StopMatcher(List.of("END", "\n\n"));
        assertEquals("ab", m.accept("abE"));
        assertEquals("EN", m.accept("Nx").substring(0, 2));
        assertFalse(m.stopped());
        assertEquals("y", m.accept("y\n"));
        assertEquals("\n", m.flush());
    }

    @Test
    void earliestStopWins() {
        StopMatcher m = new StopMatcher(List.of("world", "lo"));
        assertEquals("hel", m.accept("hello world"));
        assertTrue(m.stopped());
    }

    @Test
    void noStopsPassesEverything() {
        StopMatcher m = new StopMatcher(List.of());
        assertEquals("abc", m.accept("abc"));
        assertEquals("", m.flush());
    }
}
