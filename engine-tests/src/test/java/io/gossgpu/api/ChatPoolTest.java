package io.gossgpu.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gossgpu.GossException;
import io.gossgpu.testmodel.SafetensorsWriter;
import io.gossgpu.testmodel.TestModelGenerator;
import io.gossgpu.testmodel.TestModelPresets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Which slot a {@link ChatPool} gives a request, and which chat it closes for memory. Conversations "alpha" and
 * "beta" share only the system message; each reply is two tokens of a random model, enough to fill the caches.
 */
class ChatPoolTest {
    static final ChatOptions OPTIONS =
            ChatOptions.defaults().withMaxTokens(2).withContextLength(256).withSampling(Sampling.greedy());
    static final Conversation ALPHA1 = conversation(new Turn.User("Alpha one"));
    static final Conversation ALPHA2 =
            conversation(new Turn.User("Alpha one"), new Turn.Assistant("ok"), new Turn.User("Alpha two"));
    static final Conversation ALPHA3 = conversation(
            new Turn.User("Alpha one"),
            new Turn.Assistant("ok"),
            new Turn.User("Alpha two"),
            new Turn.Assistant("ok"),
            new Turn.User("Alpha three"));
    static final Conversation BETA1 = conversation(new Turn.User("Beta one"));
    /** Shares more of alpha's cache than the system message, but does not continue it. */
    static final Conversation ALPHA_AGAIN = conversation(new Turn.User("Alpha one, again"));

    @TempDir
    static Path dir;

    static Engine engine;

    @BeforeAll
    static void open() {
        Path model = dir.resolve("m");
        SafetensorsWriter.writeOriginal(
                new TestModelGenerator(TestModelPresets.withOverrides(TestModelPresets.demo(), 2, null, null), 5),
                model);
        engine = Engine.open(EngineOptions.of(model).withBackend("reference"));
    }

    @AfterAll
    static void close() {
        if (engine != null) engine.close();
    }

    static Conversation conversation(Turn... turns) {
        return new Conversation(null, List.of(), List.of(turns));
    }

    static int[] prompt(Conversation c) {
        return c.promptTokens(OPTIONS);
    }

    /** Takes a slot for {@code c}, replies on it, gives it back; the slot's index. */
    static int reply(ChatPool pool, Conversation c) throws InterruptedException {
        try (ChatPool.Lease lease = pool.take(prompt(c))) {
            lease.chat().send(c, OPTIONS, null);
            return lease.index();
        }
    }

    @Test
    void aConversationGoesBackToTheSlotThatHoldsIt() throws Exception {
        try (ChatPool pool = new ChatPool(engine, OPTIONS, 3)) {
            assertEquals(0, reply(pool, ALPHA1));
            assertEquals(1, reply(pool, BETA1), "an unused slot before an open chat with another conversation");
            assertEquals(0, reply(pool, ALPHA2), "alpha's slot, though beta's was used last");
            assertEquals(2, engine.openSessions());
        }
        assertEquals(0, engine.openSessions(), "closing the pool closed its chats");
    }

    @Test
    void sharingAPrefixWithoutContinuingIsNoReasonToTakeASlot() throws Exception {
        try (ChatPool pool = new ChatPool(engine, OPTIONS, 2)) {
            assertEquals(0, reply(pool, BETA1));
            assertEquals(1, reply(pool, ALPHA1));
            try (ChatPool.Lease alpha = pool.take(prompt(ALPHA2))) {
                assertEquals(1, alpha.index());
                Chat chat = alpha.chat();
                assertTrue(chat.cachedPrefixLength(prompt(ALPHA_AGAIN)) > 0);
                assertEquals(0, ChatPool.reusableTokens(chat, prompt(ALPHA_AGAIN)));
                assertTrue(ChatPool.reusableTokens(chat, prompt(ALPHA2)) > 0);
            }
            assertEquals(0, reply(pool, ALPHA_AGAIN), "the least recently used slot, beta's, not alpha's");
        }
    }

    @Test
    void theSlotThatHoldsMostOfTheConversationWinsAndBusySlotsAreSkipped() throws Exception {
        try (ChatPool pool = new ChatPool(engine, OPTIONS, 3)) {
            try (ChatPool.Lease first = pool.take(prompt(ALPHA1))) {
                first.chat().send(ALPHA1, OPTIONS, null);
                assertEquals(1, reply(pool, ALPHA2), "alpha's slot is busy");
            }
            // both alpha slots are continued; slot 0 was used last, slot 1 holds more
            assertEquals(1, reply(pool, ALPHA3));
        }
    }

    @Test
    void whenEverySlotIsBusyARequestWaits() throws Exception {
        try (ChatPool pool = new ChatPool(engine, OPTIONS, 1);
                ExecutorService waiter = Executors.newSingleThreadExecutor()) {
            ChatPool.Lease held = pool.take(prompt(ALPHA1));
            assertNull(pool.take(prompt(BETA1), Duration.ofMillis(50)));
            CompletableFuture<Integer> next = CompletableFuture.supplyAsync(
                    () -> {
                        try (ChatPool.Lease l = pool.take(prompt(BETA1))) {
                            return l.index();
                        } catch (InterruptedException e) {
                            throw new IllegalStateException(e);
                        }
                    },
                    waiter);
            while (pool.waiting() == 0) Thread.sleep(5);
            assertEquals(1, pool.busy());
            held.close();
            assertEquals(0, next.get(10, TimeUnit.SECONDS));
        }
    }

    @Test
    void aKvBudgetClosesTheLeastRecentlyUsedIdleChat() throws Exception {
        long one = engine.kvCacheSpec(OPTIONS.contextLength(), OPTIONS.swaRollback())
                .bytes();
        assertThrows(GossException.class, () -> new ChatPool(engine, OPTIONS, 2, one - 1));
        try (ChatPool pool = new ChatPool(engine, OPTIONS, 3, 2 * one)) {
            assertEquals(2, pool.chatsInBudget());
            assertEquals(0, reply(pool, ALPHA1));
            assertEquals(1, reply(pool, BETA1));
            assertEquals(0, reply(pool, ALPHA2));
            assertEquals(2, reply(pool, ALPHA_AGAIN), "the unused slot");
            assertEquals(2, engine.openSessions(), "one idle chat was closed for it");
            assertEquals(2, pool.heldChats());
            assertEquals(0, reply(pool, ALPHA3), "alpha's chat, used after beta's, was kept");
        }
    }

    @Test
    void busySlotsHoldingTheWholeBudgetMakeARequestWait() throws Exception {
        long one = engine.kvCacheSpec(OPTIONS.contextLength(), OPTIONS.swaRollback())
                .bytes();
        try (ChatPool pool = new ChatPool(engine, OPTIONS, 2, one);
                ChatPool.Lease held = pool.take(prompt(ALPHA1))) {
            held.chat();
            assertNull(pool.take(prompt(BETA1), Duration.ofMillis(50)), "a free slot, but no memory for its chat");
            assertEquals(1, pool.busy());
        }
    }
}
