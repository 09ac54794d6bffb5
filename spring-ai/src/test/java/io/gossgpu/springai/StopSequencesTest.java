package io.gossgpu.springai;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Stop sequences cut a streamed answer wherever the model's pieces split them, and pass the rest on whole. */
class StopSequencesTest {
    private static String stream(List<String> stops, String... deltas) {
        StopSequences s = new StopSequences(stops);
        StringBuilder out = new StringBuilder();
        for (String d : deltas) out.append(s.accept(d));
        return out.append(s.flush()).toString();
    }

    @Test
    void cutsAtASequenceSplitAcrossPieces() {
        assertEquals("The sum is ", stream(List.of("42"), "The sum", " is 4", "2.", " Done"));
        assertEquals("ab", stream(List.of("END", "c"), "a", "bcEND"));
    }

    @Test
    void passesTextThatOnlyLookedLikeASequence() {
        assertEquals("4 and 43", stream(List.of("42"), "4", " and 4", "3"));
        StopSequences s = new StopSequences(List.of("STOP"));
        assertEquals("ab", s.accept("abST"));
        assertEquals("STx", s.accept("x"));
        assertFalse(s.matched());
    }

    @Test
    void cutsWholeText() {
        StopSequences s = new StopSequences(List.of("\n\n", "="));
        assertEquals("17 + 25 ", s.cut("17 + 25 = 42\n\nok"));
        assertTrue(s.matched());
        assertEquals("no stop here", new StopSequences(List.of()).cut("no stop here"));
    }
}
