package io.gossgpu.constrain;

import static org.junit.jupiter.api.Assertions.*;

import io.gossgpu.api.Chat;
import io.gossgpu.api.ChatOptions;
import io.gossgpu.api.Reply;
import io.gossgpu.api.Sampling;
import io.gossgpu.api.StopReason;
import io.gossgpu.demo.DemoEngine;
import io.gossgpu.tokenizer.O200kHarmony;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Structured output through the Java API on the demo model (cpu backend): the model knows nothing of these schemas,
 * but every answer must validate (networknt is the oracle, against the schema as written), end with
 * {@code <|return|>}, and the reasoning before it must be what the same seed gives without a format. Strings and
 * arrays get a length limit ({@link TestSchemas#bounded}) because this model never means to close a string.
 */
class StructuredChatTest {
    @RegisterExtension
    static final DemoEngine DEMO = new DemoEngine();

    private static ChatOptions options(long seed) {
        return ChatOptions.defaults()
                .withSampling(Sampling.of(1.0f, seed))
                .withMaxTokens(700)
                .withCurrentDate(java.time.LocalDate.of(2026, 1, 1));
    }

    @Test
    void everyAnswerValidatesAgainstItsSchema() {
        int answered = 0;
        // objects with free keys are left out: a key is a string without a length limit, which this model never closes
        List<String> schemas = TestSchemas.ALL.stream()
                .filter(s ->
                        !s.contains("\"additionalProperties\":{") && !s.strip().equals("{\"type\":\"object\"}"))
                .toList();
        assertEquals(TestSchemas.ALL.size() - 2, schemas.size());
        for (int i = 0; i < schemas.size(); i++) {
            String schema = schemas.get(i);
            try (Chat chat = DEMO.engine().newChat(options(100 + i).withJsonSchema(TestSchemas.bounded(schema)))) {
                Reply r = chat.send("What is the capital of France?", null);
                if (r.stopReason() == StopReason.MAX_TOKENS && r.content().isEmpty())
                    continue; // never left the analysis
                assertEquals(StopReason.STOP_TOKEN, r.stopReason(), () -> "schema " + schema + ": " + r.content());
                assertEquals(O200kHarmony.RETURN, r.tokens()[r.tokens().length - 1]);
                List<String> v = TestSchemas.violations(schema, r.content());
                assertTrue(v.isEmpty(), () -> r.content() + " under " + schema + ": " + v);
                answered++;
            }
        }
        assertTrue(
                answered >= schemas.size() - 2,
                "answers that reached the final channel: " + answered + " of " + schemas.size());
    }

    /** Two chats decoding side by side in the engine's shared batch, each with its own schema: both validate. */
    @Test
    void batchedChatsKeepTheirOwnSchemas() throws Exception {
        String a = TestSchemas.ALL.get(0), b = TestSchemas.ALL.get(7);
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(2);
        try (Chat ca = DEMO.engine().newChat(options(7).withJsonSchema(TestSchemas.bounded(a)));
                Chat cb = DEMO.engine().newChat(options(8).withJsonSchema(TestSchemas.bounded(b)))) {
            long before = DEMO.engine().stepStats().sequences()
                    - DEMO.engine().stepStats().steps();
            var fa = pool.submit(() -> ca.send("What is the capital of France?", null));
            var fb = pool.submit(() -> cb.send("What is the capital of France?", null));
            Reply ra = fa.get(), rb = fb.get();
            assertTrue(TestSchemas.violations(a, ra.content()).isEmpty(), ra.content());
            assertTrue(TestSchemas.violations(b, rb.content()).isEmpty(), rb.content());
            long shared = DEMO.engine().stepStats().sequences()
                    - DEMO.engine().stepStats().steps()
                    - before;
            assertTrue(shared > 0, "no step ran both chats");
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void jsonObjectAnswersAreObjects() {
        try (Chat chat = DEMO.engine().newChat(options(5).withJsonObject())) {
            Reply r = chat.send("Name a colour.", null);
            assertEquals(StopReason.STOP_TOKEN, r.stopReason(), r::content);
            assertTrue(
                    TestSchemas.violations("{\"type\":\"object\"}", r.content()).isEmpty(), r.content());
        }
    }

    @Test
    void theReasoningIsUntouched() {
        String schema = TestSchemas.bounded(TestSchemas.ALL.get(1));
        Reply free, constrained;
        try (Chat chat = DEMO.engine().newChat(options(42))) {
            free = chat.send("What is the capital of France?", null);
        }
        try (Chat chat = DEMO.engine().newChat(options(42).withJsonSchema(schema))) {
            constrained = chat.send("What is the capital of France?", null);
        }
        assertFalse(free.reasoning().isBlank());
        assertEquals(free.reasoning(), constrained.reasoning());
        assertNotEquals(free.content(), constrained.content());
        assertTrue(TestSchemas.violations(schema, constrained.content()).isEmpty(), constrained.content());
    }
}
