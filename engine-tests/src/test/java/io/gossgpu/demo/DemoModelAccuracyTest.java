package io.gossgpu.demo;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gossgpu.api.Chat;
import io.gossgpu.api.ChatOptions;
import io.gossgpu.api.Engine;
import io.gossgpu.api.EngineOptions;
import io.gossgpu.testkit.DemoModels;
import io.gossgpu.testkit.HeldOut;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The shipped demo model answers held-out questions (new phrasings, new instructions, new sums, new word
 * lists; see scripts/train-demo/README.md) correctly: greedy accuracy of at least {@link HeldOut#GOAL} in every task
 * family on the cpu backend, over every held-out item (20 per family), and the reference backend writes the same tokens on the first
 * {@code goss.demo.referenceItems} items of each family (default 2; the reference backend is slow).
 */
class DemoModelAccuracyTest {
    @Test
    void everyFamilyIsAnsweredAtLeastTheGoalRightOnTheCpuBackendAsOnTheReference() {
        List<HeldOut.Outcome> outcomes = new ArrayList<>();
        int onReference = Integer.getInteger("goss.demo.referenceItems", 2);
        try (Engine cpu = Engine.open(EngineOptions.of(DemoModels.folder()).withBackend("cpu"));
                Chat chat = cpu.newChat(ChatOptions.defaults())) {
            for (Map.Entry<String, List<HeldOut.Item>> fam :
                    HeldOut.byFamily(HeldOut.items()).entrySet()) {
                int i = 0;
                for (HeldOut.Item it : fam.getValue()) {
                    HeldOut.Outcome o = HeldOut.answer(chat, it, DemoModels.MAX_TOKENS);
                    outcomes.add(o);
                    if (i++ < onReference) {
                        HeldOut.Outcome ref = DemoModels.onReference(it, DemoModels.MAX_TOKENS);
                        assertArrayEquals(
                                ref.tokens(),
                                o.tokens(),
                                () -> "reference wrote " + ref.transcript() + "\ncpu wrote " + o.transcript());
                    }
                }
            }
        }
        String table = HeldOut.table(outcomes);
        System.out.print("demo model, cpu backend, held-out items answered correctly:\n" + table);
        for (Map.Entry<String, List<HeldOut.Item>> fam :
                HeldOut.byFamily(HeldOut.items()).entrySet()) {
            List<HeldOut.Outcome> mine = outcomes.stream()
                    .filter(o -> o.item().family().equals(fam.getKey()))
                    .toList();
            long right = mine.stream().filter(HeldOut.Outcome::correct).count();
            assertTrue(mine.size() >= 10, fam.getKey() + ": only " + mine.size() + " held-out items");
            assertTrue(
                    HeldOut.meets(right, mine.size(), HeldOut.GOAL),
                    () -> fam.getKey() + ": " + right + "/" + mine.size() + " right\n" + table + "wrong: "
                            + String.join(
                                    "\n",
                                    mine.stream()
                                            .filter(o -> !o.correct())
                                            .map(HeldOut.Outcome::transcript)
                                            .toList()));
        }
    }
}
