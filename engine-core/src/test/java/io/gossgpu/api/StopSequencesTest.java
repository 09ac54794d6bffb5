package io.gossgpu.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Stop sequences in streamed text: nothing of a stop sequence is ever passed on, nothing else is held forever. */
class StopSequencesTest {
    private static String stream(List<String> stops, String... deltas) {
        StopSequences s = new StopSequences(stops);
        StringBuilder out = new StringBuilder();
        for (String d : deltas) out.append(s.accept(d));
        return out.append(s.flush()).toString();
    }

    @Test
    void cutsAStopSplitAcrossDeltas() {
        StopSequences m = new StopSequences(List.of("END"));
        assertEquals("Hello ", m.accept("Hello E"));
        assertEquals("", m.accept("N"));
        assertEquals("", m.accept("D and more"));
        assertTrue(m.stopped());
        assertEquals("", m.flush());
        assertEquals("Hello ", m.text());
        assertEquals("The sum is ", stream(List.of("42"), "The sum", " is 4", "2.", " Done"));
        assertEquals("ab", stream(List.of("END", "c"), "a", "bcEND"));
    }

    @Test
    void releasesWhatTurnsOutNotToBeAStop() {
        StopSequences m = new StopSequences(List.of("END", "\n\n"));
        assertEquals("ab", m.accept("abE"));
        assertEquals("ENx", m.accept("Nx"));
        assertFalse(m.stopped());
        assertEquals("y", m.accept("y\n"));
        assertEquals("\n", m.flush());
        assertEquals("abENxy\n", m.text());
        assertEquals("4 and 43", stream(List.of("42"), "4", " and 4", "3"));
    }

    @Test
    void earliestStopWins() {
        StopSequences m = new StopSequences(List.of("world", "lo"));
        assertEquals("hel", m.accept("hello world"));
        assertTrue(m.stopped());
    }

    @Test
    void aStopStartingInTextAlreadyHeldIsFound() {
        // "ab" is held back (it may start "abx"); the stop "bcd" then begins inside it
        StopSequences m = new StopSequences(List.of("abx", "bcd"));
        assertEquals("x", m.accept("xab"));
        assertEquals("a", m.accept("cd"));
        assertTrue(m.stopped());
    }

    @Test
    void noStopsNullsAndEmptiesPassEverything() {
        assertEquals("abc", stream(List.of(), "a", "bc"));
        assertEquals("abc", stream(null, "abc"));
        assertEquals("abc", stream(Arrays.asList(null, ""), "ab", "c"));
        StopSequences s = new StopSequences(List.of("\n\n", "="));
        assertEquals("17 + 25 ", s.cut("17 + 25 = 42\n\nok"));
        assertTrue(s.stopped());
    }
}
