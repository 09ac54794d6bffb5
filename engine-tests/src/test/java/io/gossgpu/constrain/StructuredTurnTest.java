package io.gossgpu.constrain;

import static org.junit.jupiter.api.Assertions.*;

import io.gossgpu.api.Chat;
import io.gossgpu.api.Reply;
import io.gossgpu.api.Sampling;
import io.gossgpu.api.StopReason;
import io.gossgpu.demo.DemoEngine;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A response format holds the whole turn on the demo model: the model that reasons "I will call get_weather" under
 * a schema it cannot fill either answers with a document of that schema or calls a declared tool, and no finished
 * reply of the held-out schema prompts ({@link SchemaPrompts}) fails its schema, whatever the decoding.
 */
class StructuredTurnTest {
    @RegisterExtension
    static final DemoEngine DEMO = new DemoEngine();

    private static final String NESTED = "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"object\","
            + "\"properties\":{\"b\":{\"type\":\"object\",\"properties\":{\"c\":{\"type\":\"string\"}},"
            + "\"required\":[\"c\"],"
            + "\"additionalProperties\":false}},\"required\":[\"b\"],\"additionalProperties\":false}},"
            + "\"required\":[\"a\"],\"additionalProperties\":false}";

    @Test
    void aModelThatWantsAToolNobodyOfferedAnswersWithTheSchema() {
        SchemaPrompts.Item item = new SchemaPrompts.Item("Say hello", NESTED, false);
        try (Chat chat = DEMO.engine().newChat(SchemaPrompts.options(item, Sampling.greedy(), 256))) {
            Reply r = chat.send(SchemaPrompts.conversation(item), null);
            assertTrue(r.reasoning().contains("get_weather"), r.reasoning()); // it means to call the tool
            assertEquals(StopReason.STOP_TOKEN, r.stopReason(), r.content());
            assertEquals(List.of(), r.toolCalls());
            assertEquals(List.of(), SchemaPrompts.violations(NESTED, r.content()), r.content());
        }
    }

    @Test
    void withToolsOfferedTheReplyIsTheSchemaOrADeclaredCall() {
        SchemaPrompts.Item item = new SchemaPrompts.Item("What is the weather in Paris?", NESTED, true);
        SchemaPrompts.Outcome o = SchemaPrompts.run(DEMO.engine(), item, Sampling.greedy(), 256);
        assertEquals(SchemaPrompts.Verdict.VALID, o.verdict(), o::describe);
        assertFalse(o.reply().toolCalls().isEmpty(), o::describe); // the demo model calls the tool it was offered
    }

    private static void assertNoneInvalid(List<SchemaPrompts.Outcome> outcomes) {
        List<String> bad = outcomes.stream()
                .filter(o -> o.verdict() == SchemaPrompts.Verdict.INVALID)
                .map(SchemaPrompts.Outcome::describe)
                .toList();
        assertEquals(List.of(), bad);
        long valid = outcomes.stream()
                .filter(o -> o.verdict() == SchemaPrompts.Verdict.VALID)
                .count();
        assertTrue(valid * 2 > outcomes.size(), "valid " + valid + " of " + outcomes.size());
    }

    @Test
    void noFinishedReplyFailsItsSchemaGreedyOrSampled() {
        List<SchemaPrompts.Outcome> outcomes = new ArrayList<>();
        List<SchemaPrompts.Item> items = SchemaPrompts.items();
        for (int i = 0; i < items.size(); i++) {
            outcomes.add(SchemaPrompts.run(DEMO.engine(), items.get(i), Sampling.greedy(), 192));
            outcomes.add(SchemaPrompts.run(DEMO.engine(), items.get(i), Sampling.of(1.0f, 7 + i), 192));
        }
        assertNoneInvalid(outcomes);
    }

    @Test
    void noFinishedReplyFailsItsSchemaUnderTopKAndTopP() {
        List<SchemaPrompts.Outcome> outcomes = new ArrayList<>();
        List<SchemaPrompts.Item> items = SchemaPrompts.items();
        for (int i = 0; i < items.size(); i += 2) {
            Sampling s = i % 4 == 0
                    ? Sampling.of(0.9f, i).withTopK(20)
                    : Sampling.of(1.2f, i).withTopP(0.9f).withMinP(0.02f);
            outcomes.add(SchemaPrompts.run(DEMO.engine(), items.get(i), s, 192));
        }
        assertNoneInvalid(outcomes);
    }

    /** Chats decoding side by side in the engine's shared batch, each with its own schema and tools. */
    @Test
    void noFinishedReplyFailsItsSchemaInABatch() throws Exception {
        List<SchemaPrompts.Item> items = SchemaPrompts.items().subList(0, 12);
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<SchemaPrompts.Outcome>> futures = new ArrayList<>();
            for (int i = 0; i < items.size(); i++) {
                SchemaPrompts.Item item = items.get(i);
                Sampling s = Sampling.of(0.8f, 50 + i);
                futures.add(pool.submit(() -> SchemaPrompts.run(DEMO.engine(), item, s, 192)));
            }
            List<SchemaPrompts.Outcome> outcomes = new ArrayList<>();
            for (Future<SchemaPrompts.Outcome> f : futures) outcomes.add(f.get());
            assertNoneInvalid(outcomes);
        } finally {
            pool.shutdownNow();
        }
    }
}
