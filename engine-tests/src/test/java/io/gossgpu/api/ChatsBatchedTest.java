package io.gossgpu.api;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gossgpu.testmodel.SafetensorsWriter;
import io.gossgpu.testmodel.TestModelPresets;
import java.nio.file.Path;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The library's side of continuous batching: {@link Chat}s of one {@link Engine} replying on several threads share the
 * engine's steps ({@link Engine#stepStats}), and each writes the tokens it writes alone.
 */
class ChatsBatchedTest {
    @TempDir
    Path dir;

    private static final String[] QUESTIONS = {"Why is the sky blue?", "Name three rivers.", "What is 2 + 2?"};
    private static final int TOKENS = 10;

    private static ChatOptions options() {
        return ChatOptions.defaults()
                .withContextLength(256)
                .withMaxTokens(TOKENS)
                .withSampling(Sampling.greedy())
                .withCurrentDate(LocalDate.of(2026, 1, 2));
    }

    @Test
    void chatsOnThreadsShareStepsAndReplyAsAlone() throws Exception {
        Path model = SafetensorsWriter.writeOriginalIn(dir, TestModelPresets.twoLayerDemo(), 23);
        try (Engine engine = Engine.open(EngineOptions.of(model).withBackend("reference"));
                ExecutorService threads = Executors.newFixedThreadPool(QUESTIONS.length)) {
            List<int[]> alone = new ArrayList<>();
            for (String q : QUESTIONS)
                try (Chat c = engine.newChat(options())) {
                    alone.add(c.send(q, null).tokens());
                }
            // Replies that differ make the comparison below mean something: were they all alike, a batch that handed
            // one
            // chat's row to another would still pass.
            assertEquals(
                    QUESTIONS.length,
                    alone.stream().map(Arrays::toString).distinct().count(),
                    () -> "the solo replies must differ: "
                            + alone.stream().map(Arrays::toString).toList());
            StepStats before = engine.stepStats();
            assertEquals(before.steps(), before.sequences(), "alone, every step holds one chat");

            CountDownLatch go = new CountDownLatch(1);
            List<CompletableFuture<int[]>> together = new ArrayList<>();
            for (String q : QUESTIONS)
                together.add(CompletableFuture.supplyAsync(
                        () -> {
                            try (Chat c = engine.newChat(options())) {
                                go.await();
                                return c.send(q, null).tokens();
                            } catch (InterruptedException e) {
                                throw new IllegalStateException(e);
                            }
                        },
                        threads));
            go.countDown();
            for (int i = 0; i < QUESTIONS.length; i++)
                assertArrayEquals(alone.get(i), together.get(i).get(120, TimeUnit.SECONDS), "tokens of chat " + i);
            assertTrue(alone.stream().allMatch(t -> t.length > 3), "each chat decodes several tokens side by side");

            StepStats after = engine.stepStats();
            long steps = after.steps() - before.steps(), seqs = after.sequences() - before.sequences();
            assertTrue(seqs > 1.5 * steps, seqs + " chat-steps in " + steps + " steps: the chats were not batched");
        }
    }
}
