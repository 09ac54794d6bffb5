package examples;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gossgpu.api.Chat;
import io.gossgpu.api.ChatListener;
import io.gossgpu.api.ChatOptions;
import io.gossgpu.api.Completion;
import io.gossgpu.api.Engine;
import io.gossgpu.api.EngineOptions;
import io.gossgpu.api.Reply;
import io.gossgpu.api.Sampling;
import io.gossgpu.testmodel.SafetensorsWriter;
import io.gossgpu.testmodel.TestModelGenerator;
import io.gossgpu.testmodel.TestModelPresets;
import java.nio.file.Path;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The library as an application uses it, through the public API only (package {@code examples} sees
 * nothing package-private): open an engine on a model folder, chat with streaming callbacks, complete
 * raw text, run two chats on two threads at once, close.
 */
class PublicApiExampleTest {
    @TempDir
    static Path dir;

    static Path model;

    @BeforeAll
    static void writeModel() {
        // A random-weight model with the real 201088-token vocabulary, so Harmony prompts fit; 2 layers keep it quick.
        model = dir.resolve("model");
        SafetensorsWriter.writeOriginal(new TestModelGenerator(TestModelPresets.twoLayerDemo(), 5), model);
    }

    @Test
    void chatStreamsTokensToTheListener() {
        ChatOptions options =
                ChatOptions.defaults().withMaxTokens(6).withContextLength(512).withSampling(Sampling.greedy());
        try (Engine engine = Engine.open(EngineOptions.of(model).withBackend("reference"));
                Chat chat = engine.newChat(options)) {
            StringBuilder streamed = new StringBuilder();
            int[] tokenCount = {0};
            Reply first = chat.send("Hello!", new ChatListener() {
                @Override
                public void onToken(int token) {
                    tokenCount[0]++;
                }

                @Override
                public void onContent(String delta) {
                    streamed.append(delta);
                }
            });
            assertEquals(first.tokens().length, tokenCount[0]);
            assertEquals(first.content(), streamed.toString());
            assertTrue(
                    first.timings().promptTokens() > 20, "the Harmony system message alone is longer than 20 tokens");
            Reply second = chat.send("And again?", null);
            assertEquals(6, second.tokens().length);
        }
    }

    @Test
    void twoChatsOnTwoThreadsGiveWhatEachGivesAlone() throws Exception {
        ChatOptions options =
                ChatOptions.defaults().withMaxTokens(5).withContextLength(256).withSampling(Sampling.greedy());
        try (Engine engine = Engine.open(EngineOptions.of(model).withBackend("reference"))) {
            int[] aloneA, aloneB;
            try (Chat a = engine.newChat(options);
                    Chat b = engine.newChat(options)) {
                aloneA = a.send("first question", null).tokens();
                aloneB = b.send("a different one", null).tokens();
            }
            ExecutorService pool = Executors.newFixedThreadPool(2);
            try (Chat a = engine.newChat(options);
                    Chat b = engine.newChat(options)) {
                Future<int[]> fa =
                        pool.submit(() -> a.send("first question", null).tokens());
                Future<int[]> fb =
                        pool.submit(() -> b.send("a different one", null).tokens());
                assertArrayEquals(aloneA, fa.get());
                assertArrayEquals(aloneB, fb.get());
            } finally {
                pool.shutdown();
            }
        }
    }

    @Test
    void rawCompletionIsReproducibleWithASeed() {
        ChatOptions options =
                ChatOptions.defaults().withMaxTokens(8).withContextLength(64).withSampling(Sampling.of(0.8f, 42));
        try (Engine engine = Engine.open(EngineOptions.of(model).withBackend("reference"));
                Completion c = engine.newCompletion(options)) {
            Reply r1 = c.complete("Once upon a time", null);
            Reply r2 = c.complete("Once upon a time", null);
            assertArrayEquals(r1.tokens(), r2.tokens());
            assertEquals(r1.content(), r2.content());
            assertEquals(8, r1.tokens().length);
        }
    }
}
