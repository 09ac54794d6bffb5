package io.gossgpu.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gossgpu.harmony.HarmonyRenderer;
import io.gossgpu.harmony.Message;
import io.gossgpu.testmodel.SafetensorsWriter;
import io.gossgpu.testmodel.TestModelPresets;
import io.gossgpu.tokenizer.O200kHarmony;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Replies with reasoning: Harmony drops a finished turn's analysis message from the history, so the next prompt
 * leaves the cached tokens right after the last reply's {@code <|start|>assistant<|channel|>}. With rollback slack
 * the chat keeps everything before that and prefills only the rest; without it (slack 0: the sliding layers keep
 * only their window of 16) the whole conversation is prefilled every turn, as before. Replies are the scripted
 * Harmony frame around reasoning tokens that the model chooses itself (greedy argmax of the real logits), so a
 * cache that resumed wrongly would change them.
 */
class ChatRollbackTest {
    static final int FREE_TOKENS = 10;

    @TempDir
    Path dir;

    /** Reasoning of {@link #FREE_TOKENS} model-chosen tokens, then a fixed final answer. */
    static List<Integer> reply(O200kHarmony tok, String answer) {
        List<Integer> s = new ArrayList<>();
        for (int t : tok.encodeWithSpecials("<|channel|>analysis<|message|>Let me think")) s.add(t);
        for (int i = 0; i < FREE_TOKENS; i++) s.add(ChatCacheReuseTest.Scripted.FREE);
        for (int t :
                tok.encodeWithSpecials("<|end|><|start|>assistant<|channel|>final<|message|>" + answer + "<|return|>"))
            s.add(t);
        return s;
    }

    record Turn(Reply reply, int prefilled, int promptLength) {}

    /** Four user turns; the first three answered with reasoning, the last left to the model (greedy, 12 tokens). */
    static List<Turn> converse(Chat chat, ChatCacheReuseTest.Scripted scripted, boolean forget) {
        O200kHarmony tok = O200kHarmony.get();
        HarmonyRenderer renderer = new HarmonyRenderer(tok);
        String[] users = {"Hi", "Tell me more", "And then?", "Thanks"};
        List<Turn> turns = new ArrayList<>();
        for (int i = 0; i < users.length; i++) {
            if (i < 3) scripted.script.addAll(reply(tok, "Answer " + i + "."));
            if (forget) chat.forgetCache();
            List<Message> next = new ArrayList<>(chat.conversation());
            next.add(Message.user(users[i]));
            int promptLength = renderer.renderForCompletion(next).length;
            Reply r = chat.send(users[i], null);
            assertTrue(scripted.script.isEmpty(), "the reply ran through its script");
            if (i < 3) assertEquals("Answer " + i + ".", r.content());
            turns.add(new Turn(r, chat.lastPrefillTokens(), promptLength));
        }
        return turns;
    }

    @Test
    void turnsAfterAReplyWithReasoningPrefillOnlyTheNewTokensAndReplyAsAFullPrefill() {
        Path model = SafetensorsWriter.writeOriginalIn(dir, TestModelPresets.twoLayerDemo(), 5);
        O200kHarmony tok = O200kHarmony.get();
        // window 16 + slack 48 = rings of 64 slots, wrapped by the ~130-token system prompt alone
        ChatOptions base = ChatOptions.defaults()
                .withMaxTokens(12 + FREE_TOKENS + 20)
                .withContextLength(1024)
                .withSampling(Sampling.greedy())
                .withCurrentDate(java.time.LocalDate.of(2026, 1, 2));
        ChatCacheReuseTest.Scripted scripted = new ChatCacheReuseTest.Scripted();
        try (Engine engine = Engine.open(EngineOptions.of(model), () -> scripted)) {
            List<Turn> reused, none, full;
            try (Chat chat = engine.newChat(base.withSwaRollback(48))) {
                reused = converse(chat, scripted, false);
            }
            try (Chat chat = engine.newChat(base.withSwaRollback(0))) {
                none = converse(chat, scripted, false);
            }
            try (Chat chat = engine.newChat(base.withSwaRollback(48))) {
                full = converse(chat, scripted, true);
            }
            for (int i = 0; i < 4; i++) {
                assertEquals(
                        Arrays.toString(full.get(i).reply().tokens()),
                        Arrays.toString(reused.get(i).reply().tokens()),
                        "turn " + i);
                assertEquals(
                        Arrays.toString(full.get(i).reply().tokens()),
                        Arrays.toString(none.get(i).reply().tokens()),
                        "turn " + i);
                assertEquals(
                        full.get(i).promptLength(),
                        full.get(i).prefilled(),
                        "no reuse: turn " + i + " prefills everything");
            }
            assertTrue(full.get(0).promptLength() > 64, "the system prompt alone wraps the rings");
            String[] users = {"Tell me more", "And then?", "Thanks"};
            for (int i = 1; i < 4; i++) {
                // the rendered history continues "<|start|>assistant<|channel|>" with the final answer alone
                int added = tok.encodeWithSpecials("final<|message|>Answer " + (i - 1)
                                + ".<|end|><|start|>user<|message|>" + users[i - 1] + "<|end|><|start|>assistant")
                        .length;
                assertEquals(added, reused.get(i).prefilled(), "turn " + i);
                // slack 0: the last reply (3 + 10 + ~10 tokens) is deeper than one step, so everything again
                assertEquals(none.get(i).promptLength(), none.get(i).prefilled(), "slack 0, turn " + i);
            }
        }
    }
}
