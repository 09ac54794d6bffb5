package io.gossgpu.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Held-out replies were scored with {@code contains(answer)}, so "There are 12 words." passed for an item
 * whose answer is "2 word", and "151 + 99 = 250." for "150"... the reply must be the item's final text.
 */
class HeldOutScoringTest {
    private static HeldOut.Item item(String family) {
        return HeldOut.items().stream()
                .filter(i -> i.family().equals(family))
                .findFirst()
                .orElseThrow();
    }

    @Test
    void aReplyIsRightOnlyWhenItIsTheFinalText() {
        HeldOut.Item count = HeldOut.items().stream()
                .filter(i -> i.finalText().equals("There are 2 words."))
                .findFirst()
                .orElseThrow();
        assertTrue(HeldOut.isFinal(count, "There are 2 words."));
        assertTrue(HeldOut.isFinal(count, " There are 2 words.\n"));
        assertFalse(HeldOut.isFinal(count, "There are 12 words."));
        assertFalse(HeldOut.isFinal(count, "There are 2 words. No, 3 words."));

        HeldOut.Item add = item("add");
        assertEquals("51 + 99 = 150.", add.finalText());
        assertFalse(HeldOut.isFinal(add, "51 + 99 = 1500."));
        assertFalse(HeldOut.isFinal(add, "1 + 99 = 150."));
    }

    @Test
    void everyItemHasAFinalText() {
        List<HeldOut.Item> items = HeldOut.items();
        assertEquals(200, items.size());
        assertTrue(items.stream().noneMatch(i -> i.finalText().isBlank()));
    }
}
