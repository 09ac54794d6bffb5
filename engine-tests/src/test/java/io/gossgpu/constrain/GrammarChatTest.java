package io.gossgpu.constrain;

import static org.junit.jupiter.api.Assertions.*;

import io.gossgpu.api.Chat;
import io.gossgpu.api.ChatOptions;
import io.gossgpu.api.Completion;
import io.gossgpu.api.Engine;
import io.gossgpu.api.EngineOptions;
import io.gossgpu.api.Reply;
import io.gossgpu.api.Sampling;
import io.gossgpu.api.StopReason;
import io.gossgpu.testkit.DemoModels;
import io.gossgpu.testmodel.SafetensorsWriter;
import io.gossgpu.testmodel.TestModelGenerator;
import io.gossgpu.testmodel.TestModelPresets;
import io.gossgpu.tokenizer.O200kHarmony;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * GBNF grammars ({@link TestGrammars}) on real generations: chats on the demo model (the answer on the final channel
 * follows the grammar, the reasoning is what the same seed gives without one) and raw completions on random-weight
 * models (the whole continuation follows it). Every finished text is accepted by the grammar's independent oracle;
 * one cut off by the token limit must still be a prefix the grammar can go on from.
 */
class GrammarChatTest {
    @TempDir
    Path dir;

    private static ChatOptions options(long seed, int maxTokens) {
        return ChatOptions.defaults()
                .withSampling(Sampling.of(1.0f, seed))
                .withMaxTokens(maxTokens)
                .withCurrentDate(java.time.LocalDate.of(2026, 1, 1));
    }

    @Test
    void demoModelAnswersFollowTheirGrammars() {
        int answered = 0;
        try (Engine engine = Engine.open(EngineOptions.of(DemoModels.folder()).withBackend("cpu"))) {
            for (int i = 0; i < TestGrammars.ALL.size(); i++) {
                TestGrammars.Case c = TestGrammars.ALL.get(i);
                try (Chat chat = engine.newChat(options(300 + i, 500).withGrammar(c.gbnf()))) {
                    Reply r = chat.send("What is the capital of France?", null);
                    if (r.stopReason() == StopReason.MAX_TOKENS) {
                        assertNotNull(
                                prefixState(c, r.content()),
                                () -> c.name() + ": cut-off answer '" + r.content() + "' is not a prefix");
                        continue;
                    }
                    assertEquals(O200kHarmony.RETURN, r.tokens()[r.tokens().length - 1], c.name());
                    assertTrue(c.oracle().test(r.content()), () -> c.name() + ": '" + r.content() + "'");
                    answered++;
                }
            }
            // the reasoning is free: the same seed reasons the same with or without a grammar
            TestGrammars.Case date = TestGrammars.ALL.get(3);
            Reply free, held;
            try (Chat chat = engine.newChat(options(42, 500))) {
                free = chat.send("What is the capital of France?", null);
            }
            try (Chat chat = engine.newChat(options(42, 500).withGrammar(date.gbnf()))) {
                held = chat.send("What is the capital of France?", null);
            }
            assertFalse(free.reasoning().isBlank());
            assertEquals(free.reasoning(), held.reasoning());
            assertTrue(date.oracle().test(held.content()), held.content());
        }
        assertTrue(
                answered >= TestGrammars.ALL.size() * 2 / 3, "answered " + answered + " of " + TestGrammars.ALL.size());
    }

    /** Random weights, raw completion: the grammar holds from the first token, and {@code <|endoftext|>} ends it. */
    @Test
    void randomWeightCompletionsFollowTheirGrammars() {
        int finished = 0, runs = 0;
        for (int model = 0; model < 2; model++) {
            Path folder = dir.resolve("m" + model);
            SafetensorsWriter.writeOriginal(
                    new TestModelGenerator(TestModelPresets.twoLayerDemo(), 50 + model), folder);
            try (Engine engine = Engine.open(EngineOptions.of(folder).withBackend("cpu"))) {
                for (int i = 0; i < TestGrammars.ALL.size(); i++) {
                    TestGrammars.Case c = TestGrammars.ALL.get(i);
                    try (Completion completion =
                            engine.newCompletion(options(model * 100 + i, 48).withGrammar(c.gbnf()))) {
                        Reply r = completion.complete("Write it:", null);
                        runs++;
                        if (r.stopReason() == StopReason.MAX_TOKENS) {
                            assertNotNull(
                                    prefixState(c, r.content()),
                                    () -> c.name() + ": cut-off text '" + r.content() + "' is not a prefix");
                            continue;
                        }
                        assertEquals(O200kHarmony.END_OF_TEXT, r.tokens()[r.tokens().length - 1], c.name());
                        assertTrue(c.oracle().test(r.content()), () -> c.name() + ": '" + r.content() + "'");
                        finished++;
                    }
                }
            }
        }
        assertTrue(finished >= runs / 2, "finished " + finished + " of " + runs);
    }

    private static Object prefixState(TestGrammars.Case c, String text) {
        GbnfMachine m = GbnfGrammar.compile(c.gbnf()).machine();
        return m.step(m.start(), text.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }
}
