package io.gossgpu.server;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.gossgpu.GossException;
import io.gossgpu.api.Engine;
import io.gossgpu.api.EngineOptions;
import io.gossgpu.api.StepStats;
import io.gossgpu.backend.KvType;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * Continuous batching in the server: requests on several slots decode in shared steps and get what they get alone;
 * admission is bounded by the KV memory budget.
 */
class BatchingTest {
    static final ObjectMapper JSON = new ObjectMapper();

    private static String complete(GossServer s, String prompt) throws Exception {
        String body = "{\"model\":\"gpt-oss\",\"prompt\":" + JSON.writeValueAsString(prompt)
                + ",\"max_tokens\":12,\"temperature\":0}";
        String r = RawHttp.exchange(
                s.port(),
                RawHttp.request("POST", "/v1/completions", "127.0.0.1", body, "Content-Type: application/json"),
                60_000);
        assertEquals(200, RawHttp.status(r), r);
        JsonNode j = JSON.readTree(RawHttp.body(r));
        assertEquals(12, j.path("usage").path("completion_tokens").asInt(), r);
        return j.path("choices").path(0).path("text").asText();
    }

    @Test
    void slotsDecodeInSharedStepsAndWriteWhatTheyWriteAlone() throws Exception {
        String[] prompts = {"The sky is", "Once upon a time, in a land far away,", "1, 2, 3,"};
        TestServers.Scripted backend = new TestServers.Scripted();
        backend.stepMillis = 20; // steps long enough that the three streams overlap on any machine
        try (GossServer s = TestServers.start(TestServers.options().withParallel(3), backend);
                ExecutorService clients = Executors.newFixedThreadPool(prompts.length)) {
            List<String> alone = new ArrayList<>();
            for (String p : prompts) alone.add(complete(s, p));
            // Were every reply the same (a model that ignored its prompt, a batch that read one row for all),
            // the comparison below would pass all the same. The prompts' solo replies differ, so it cannot.
            assertEquals(
                    prompts.length, new java.util.HashSet<>(alone).size(), "the solo replies must differ: " + alone);
            StepStats before = s.engine().stepStats();
            List<CompletableFuture<String>> together = new ArrayList<>();
            for (String p : prompts)
                together.add(CompletableFuture.supplyAsync(
                        () -> {
                            try {
                                return complete(s, p);
                            } catch (Exception e) {
                                throw new IllegalStateException(e);
                            }
                        },
                        clients));
            for (int i = 0; i < prompts.length; i++)
                assertEquals(alone.get(i), together.get(i).get(60, TimeUnit.SECONDS), "prompt " + i);
            StepStats after = s.engine().stepStats();
            long steps = after.steps() - before.steps(), seqs = after.sequences() - before.sequences();
            // alone: one sequence per step; side by side most of the 3 × 12 forward passes share steps
            assertTrue(seqs > 1.5 * steps, seqs + " sequence-steps in " + steps + " steps");
            assertEquals(0, s.stats().busySlots());
        }
    }

    /** --kv-memory counts each slot's cache in the engine's KV type: the same budget holds 4 F16 caches for 2 F32. */
    @Test
    void kvMemoryCountsTheCacheType() {
        int ctx = 64;
        EngineOptions o = EngineOptions.of(TestServers.model()).withBackend("reference");
        try (Engine f32 = Engine.open(o.withKvType(KvType.F32), TestServers.Scripted::new);
                Engine f16 = Engine.open(o.withKvType(KvType.F16), TestServers.Scripted::new);
                Engine q8 = Engine.open(o.withKvType(KvType.Q8_0), TestServers.Scripted::new)) {
            long one = f32.kvCacheSpec(ctx, 0).bytes();
            assertEquals(one / 2, f16.kvCacheSpec(ctx, 0).bytes());
            assertEquals(2, new SlotPool(f32, 8, 4, 60_000, ctx, 0, 2 * one).cachesInBudget());
            assertEquals(4, new SlotPool(f16, 8, 4, 60_000, ctx, 0, 2 * one).cachesInBudget());
            SlotPool small = new SlotPool(q8, 8, 4, 60_000, ctx, 0, 2 * one);
            assertEquals(2 * one / q8.kvCacheSpec(ctx, 0).bytes(), small.cachesInBudget());
            assertTrue(small.cachesInBudget() >= 6, "q8_0 takes about 0.27 of f32: " + small.cachesInBudget());
        }
    }

    @Test
    void admissionIsBoundedByKvMemory() throws Exception {
        int ctx = 64;
        try (Engine e = Engine.open(
                        EngineOptions.of(TestServers.model()).withBackend("reference"), TestServers.Scripted::new);
                ExecutorService waiter = Executors.newSingleThreadExecutor()) {
            long one = e.kvCacheSpec(ctx, 0).bytes();
            GossException tooSmall =
                    assertThrows(GossException.class, () -> new SlotPool(e, 2, 4, 60_000, ctx, 0, one - 1));
            assertTrue(tooSmall.getMessage().startsWith("--kv-memory"), tooSmall.getMessage());
            // room for one slot's cache: the second request waits for the first, then takes the memory over
            SlotPool pool = new SlotPool(e, 2, 4, 60_000, ctx, 0, one);
            try {
                assertEquals(1, pool.cachesInBudget());
                SlotPool.Slot first = pool.acquire(new int[] {1, 2, 3});
                first.chat();
                first.cachedTokens = 3; // as a generation of its 3-token prompt leaves it
                assertEquals(one, pool.heldBytes());
                CompletableFuture<SlotPool.Slot> second = CompletableFuture.supplyAsync(
                        () -> {
                            try {
                                return pool.acquire(new int[] {4, 5, 6});
                            } catch (InterruptedException ex) {
                                throw new IllegalStateException(ex);
                            }
                        },
                        waiter);
                Thread.sleep(300);
                assertFalse(second.isDone(), "a free slot, but no memory for its cache: the request waits");
                assertEquals(1, pool.waiting());
                pool.release(first);
                SlotPool.Slot next = second.get(10, TimeUnit.SECONDS);
                next.chat();
                assertEquals(one, pool.heldBytes(), "one cache at a time");
                assertEquals(1, e.openSessions(), "the idle slot's cache was dropped for it");
                assertEquals(0, pool.cachedTokens(), "the dropped cache's tokens no longer count as held");
                pool.release(next);
            } finally {
                pool.closeSessions();
            }
            // no budget: both slots hold a cache
            SlotPool free = new SlotPool(e, 2, 4, 60_000, ctx, 0, 0);
            try {
                SlotPool.Slot a = free.acquire(new int[] {1}), b = free.acquire(new int[] {2});
                a.chat();
                b.chat();
                assertEquals(2 * one, free.heldBytes());
                assertEquals(2, free.cachesInBudget());
                free.release(a);
                free.release(b);
            } finally {
                free.closeSessions();
            }
        }
    }

    @Test
    void aKvBudgetBelowOneCacheFailsTheLoadAndReleasesTheModel() throws Exception {
        AtomicBoolean backendClosed = new AtomicBoolean();
        io.gossgpu.backend.ForwardingBackend backend =
                new io.gossgpu.backend.ForwardingBackend(new io.gossgpu.reference.ReferenceBackend()) {
                    @Override
                    public void close() {
                        backendClosed.set(true);
                        super.close();
                    }
                };
        GossServer s = GossServer.start(
                TestServers.options().withKvMemoryBytes(1024),
                () -> Engine.open(EngineOptions.of(TestServers.model()).withBackend("reference"), () -> backend));
        try {
            assertFalse(s.awaitReady(Duration.ofMinutes(2)), "no slot's cache fits in 1 KiB");
            String r = RawHttp.exchange(s.port(), RawHttp.request("GET", "/health", "127.0.0.1", null), 10_000);
            assertEquals(503, RawHttp.status(r), r);
            assertTrue(RawHttp.body(r).contains("--kv-memory"), r);
            assertTrue(backendClosed.get(), "the loaded model was closed");
        } finally {
            assertDoesNotThrow(s::close);
        }
    }
}
