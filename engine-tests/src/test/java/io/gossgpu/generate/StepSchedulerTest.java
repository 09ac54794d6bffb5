package io.gossgpu.generate;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gossgpu.backend.Batch;
import io.gossgpu.backend.ForwardingBackend;
import io.gossgpu.backend.LoadedWeights;
import io.gossgpu.forward.Executor;
import io.gossgpu.model.Checkpoint;
import io.gossgpu.model.ModelWeights;
import io.gossgpu.reference.ReferenceBackend;
import io.gossgpu.testmodel.TestModelGenerator;
import io.gossgpu.testmodel.TestModelPresets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Continuous batching of sessions on one {@link StepScheduler}: sessions generating on several threads share steps and
 * get the tokens they get alone; a prompt beside running streams goes in chunks; a cancel takes a waiting request out.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class StepSchedulerTest {
    /** The reference backend, noting each step's sequences (their token counts). */
    static final class Steps extends ForwardingBackend {
        final List<List<Integer>> steps = Collections.synchronizedList(new ArrayList<>());

        Steps() {
            super(new ReferenceBackend());
        }

        @Override
        public void beginStep(Batch batch) {
            List<Integer> shape = new ArrayList<>();
            for (int s = 0; s < batch.size(); s++) shape.add(batch.tokens(s));
            steps.add(shape);
            super.beginStep(batch);
        }
    }

    private Checkpoint ck;
    private Steps backend;
    private LoadedWeights weights;

    @BeforeAll
    void load() {
        ck = new TestModelGenerator(TestModelPresets.tiny(), 41).inMemory();
        backend = new Steps();
        weights = backend.loadWeights(ModelWeights.of(ck));
    }

    @AfterAll
    void close() {
        weights.close();
        backend.close();
        ck.close();
    }

    private static int[] prompt(int n, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        int[] t = new int[n];
        for (int i = 0; i < n; i++) t[i] = r.nextInt(TestModelPresets.tiny().vocabSize());
        return t;
    }

    private int[] alone(int[] prompt, int tokens) {
        try (Session s = new Session(backend, weights, 64)) {
            return s.generate(prompt, GenerationOptions.greedy(tokens), null).tokens();
        }
    }

    /**
     * The sessions' solo replies differ from each other, so that comparing the batched replies with them shows a batch
     * that hands one session's row to another: with replies all alike it would pass.
     */
    private static void assertAllDiffer(int[]... replies) {
        List<String> each = Arrays.stream(replies).map(Arrays::toString).toList();
        assertEquals(replies.length, each.stream().distinct().count(), () -> "the solo replies must differ: " + each);
    }

    @Test
    void sessionsOnThreadsShareStepsAndGetTheirTokensAlone() throws Exception {
        int n = 4, tokens = 24;
        int[][] prompts = new int[n][], want = new int[n][];
        for (int i = 0; i < n; i++) {
            prompts[i] = prompt(3 + 2 * i, 50 + i);
            want[i] = alone(prompts[i], tokens);
        }
        assertAllDiffer(want);
        backend.steps.clear();
        try (Executor ex = new Executor(backend, weights);
                ExecutorService threads = Executors.newFixedThreadPool(n)) {
            StepScheduler scheduler = new StepScheduler(ex, 4);
            CountDownLatch go = new CountDownLatch(1);
            List<CompletableFuture<int[]>> got = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                int[] p = prompts[i];
                got.add(CompletableFuture.supplyAsync(
                        () -> {
                            try (Session s = new Session(scheduler, 64, 0, 0)) {
                                go.await();
                                return s.generate(p, GenerationOptions.greedy(tokens), null)
                                        .tokens();
                            } catch (InterruptedException e) {
                                throw new IllegalStateException(e);
                            }
                        },
                        threads));
            }
            go.countDown();
            for (int i = 0; i < n; i++)
                assertArrayEquals(want[i], got.get(i).get(60, TimeUnit.SECONDS), "tokens of session " + i);
            StepScheduler.Stats st = scheduler.stats();
            int rows = 0;
            for (int[] p : prompts) rows += p.length + tokens - 1;
            assertEquals(rows, st.rows(), "every prompt token and every decoded token ran once");
            // 4 streams of 23 decode steps each: alone that is 92 steps; batched, most steps hold several streams
            assertTrue(st.steps() < 60, "steps: " + st.steps() + " for " + st.sequences() + " sequence-steps");
            assertTrue(
                    backend.steps.stream().anyMatch(s -> s.size() == n),
                    "some step held all four sessions: " + backend.steps);
        }
    }

    @Test
    void aPromptBesideRunningStreamsGoesInChunks() throws Exception {
        int[] first = prompt(4, 60), second = prompt(14, 61);
        int[] wantFirst = alone(first, 20), wantSecond = alone(second, 4);
        assertAllDiffer(Arrays.copyOf(wantFirst, 4), wantSecond);
        backend.steps.clear();
        try (Executor ex = new Executor(backend, weights);
                ExecutorService threads = Executors.newFixedThreadPool(2)) {
            StepScheduler scheduler = new StepScheduler(ex, 4);
            CountDownLatch started = new CountDownLatch(3);
            CompletableFuture<int[]> a = CompletableFuture.supplyAsync(
                    () -> {
                        try (Session s = new Session(scheduler, 64, 0, 0)) {
                            return s.generate(first, GenerationOptions.greedy(20), t -> started.countDown())
                                    .tokens();
                        }
                    },
                    threads);
            assertTrue(started.await(30, TimeUnit.SECONDS), "the first stream decodes");
            CompletableFuture<int[]> b = CompletableFuture.supplyAsync(
                    () -> {
                        try (Session s = new Session(scheduler, 64, 0, 0)) {
                            return s.generate(second, GenerationOptions.greedy(4), null)
                                    .tokens();
                        }
                    },
                    threads);
            assertArrayEquals(wantFirst, a.get(60, TimeUnit.SECONDS));
            assertArrayEquals(wantSecond, b.get(60, TimeUnit.SECONDS));
        }
        // the 14-token prompt ran as chunks of at most 4 beside the first stream's decode tokens
        List<List<Integer>> mixed = backend.steps.stream()
                .filter(s -> s.size() == 2 && s.contains(1) && s.stream().anyMatch(t -> t > 1))
                .toList();
        assertTrue(mixed.size() >= 3, "steps of a decode token and a prompt chunk: " + backend.steps);
        assertTrue(
                backend.steps.stream().allMatch(s -> s.size() == 1 || s.stream().allMatch(t -> t <= 4)),
                "no chunk over 4 tokens beside another sequence: " + backend.steps);
    }

    @Test
    void aPromptAloneRunsWhole() {
        backend.steps.clear();
        try (Executor ex = new Executor(backend, weights);
                Session s = new Session(new StepScheduler(ex, 4), 64, 0, 0)) {
            s.generate(prompt(14, 62), GenerationOptions.greedy(2), null);
        }
        assertEquals(List.of(List.of(14), List.of(1)), backend.steps);
    }

    @Test
    void cancelTakesAWaitingRequestOutAtOnce() throws Exception {
        // the scheduler's step is held up (a step is running on another thread), so the request waits: cancel frees it
        CountDownLatch inStep = new CountDownLatch(1), release = new CountDownLatch(1);
        ForwardingBackend slow = new ForwardingBackend(backend) {
            @Override
            public void beginStep(Batch batch) {
                inStep.countDown();
                try {
                    release.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        };
        try (Executor ex = new Executor(slow, weights);
                ExecutorService threads = Executors.newFixedThreadPool(2)) {
            StepScheduler scheduler = new StepScheduler(ex, 4);
            try (Session running = new Session(scheduler, 64, 0, 0);
                    Session waiting = new Session(scheduler, 64, 0, 0)) {
                CompletableFuture<float[]> a =
                        CompletableFuture.supplyAsync(() -> running.prefill(prompt(3, 70)), threads);
                assertTrue(inStep.await(30, TimeUnit.SECONDS));
                CompletableFuture<GenerationResult> b = CompletableFuture.supplyAsync(
                        () -> waiting.generate(prompt(3, 71), GenerationOptions.greedy(5), null), threads);
                Thread.sleep(200); // b is queued behind the running step
                long t0 = System.nanoTime();
                waiting.cancel();
                GenerationResult r = b.get(10, TimeUnit.SECONDS);
                assertTrue(
                        System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(5),
                        "the cancelled request did not wait for the step");
                assertEquals(GenerationResult.StopReason.CANCELLED, r.stopReason());
                assertEquals(0, r.tokens().length);
                assertEquals(0, waiting.position(), "nothing of the cancelled prompt ran");
                release.countDown();
                assertEquals(weights.config().vocabSize(), a.get(30, TimeUnit.SECONDS).length);
                assertThrows(
                        io.gossgpu.GossException.class,
                        () -> waiting.prefill(new int[] {weights.config().vocabSize()}));
            }
        }
    }
}
