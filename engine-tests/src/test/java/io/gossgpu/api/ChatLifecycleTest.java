package io.gossgpu.api;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gossgpu.GossException;
import io.gossgpu.harmony.Message;
import io.gossgpu.harmony.Role;
import io.gossgpu.testmodel.SafetensorsWriter;
import io.gossgpu.testmodel.TestModelPresets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDate;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A chat used from a second thread while it replies, and a chat or engine closed while a reply is under way
 * (between its steps: the reply's thread is in a listener). Closing mid-step, on every backend, is the conformance
 * kit's {@code closingTheEngineMidStepEndsTheReplyCancelledAfterTheStep}.
 */
class ChatLifecycleTest {
    @TempDir
    static Path dir;

    private static Path model;

    private static final int MAX_TOKENS = 12;

    @BeforeAll
    static void writeModel() {
        model = SafetensorsWriter.writeOriginalIn(dir, TestModelPresets.twoLayerDemo(), 23);
    }

    private static ChatOptions options() {
        return ChatOptions.defaults()
                .withContextLength(512)
                .withMaxTokens(MAX_TOKENS)
                .withSampling(Sampling.greedy())
                .withCurrentDate(LocalDate.of(2026, 1, 2));
    }

    /** A listener that stops the reply's thread at its {@code at}-th token until {@link #go} is counted down. */
    private static final class Holding implements ChatListener {
        final CountDownLatch reached = new CountDownLatch(1), go = new CountDownLatch(1);
        private final int at;
        private int tokens;

        Holding(int at) {
            this.at = at;
        }

        @Override
        public void onToken(int token) {
            if (++tokens != at) return;
            reached.countDown();
            try {
                assertTrue(go.await(2, TimeUnit.MINUTES), "released");
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        }
    }

    private static CompletableFuture<Reply> sendAsync(Chat chat, String text, ChatListener l) {
        CompletableFuture<Reply> f = new CompletableFuture<>();
        Thread t = new Thread(
                () -> {
                    try {
                        f.complete(chat.send(text, l));
                    } catch (Throwable e) {
                        f.completeExceptionally(e);
                    }
                },
                "replying");
        t.start();
        return f;
    }

    /**
     * A send while another thread's send is replying is refused at once, with a GossException that says why, and leaves
     * the conversation as it was; the first reply ends as it would have alone. Before: both ran on the one KV cache
     * (here the second, with the first parked in its listener, ran to its end) and the conversation kept both user turns.
     */
    @Test
    void aSecondSendWhileReplyingIsRefusedAndLeavesTheConversation() throws Exception {
        try (Engine engine = Engine.open(EngineOptions.of(model).withBackend("reference"))) {
            Reply alone;
            try (Chat c = engine.newChat(options())) {
                alone = c.send("Why is the sky blue?", null);
            }
            try (Chat chat = engine.newChat(options())) {
                Holding holding = new Holding(2);
                CompletableFuture<Reply> first = sendAsync(chat, "Why is the sky blue?", holding);
                assertTrue(holding.reached.await(2, TimeUnit.MINUTES), "the first reply is under way");
                List<Message> before = chat.conversation();

                GossException e = assertTimeoutPreemptively(
                        Duration.ofSeconds(10),
                        () -> assertThrows(GossException.class, () -> chat.send("Name three rivers.", null)));
                assertTrue(e.getMessage().contains("already replying"), e.getMessage());
                assertEquals(1, e.getMessage().lines().count(), e.getMessage());
                assertThrows(GossException.class, () -> chat.sendToolResult("f", "{}", null));
                assertThrows(
                        GossException.class, () -> chat.reply(List.of(Message.user("x")), 4, Sampling.greedy(), null));
                assertEquals(before, chat.conversation(), "a refused send leaves the conversation as it was");

                holding.go.countDown();
                Reply r = first.get(2, TimeUnit.MINUTES);
                assertEquals(alone.stopReason(), r.stopReason());
                assertArrayEquals(alone.tokens(), r.tokens(), "the first reply's tokens are those it writes alone");
                long userTurns = chat.conversation().stream()
                        .filter(m -> m.role() == Role.USER)
                        .count();
                assertEquals(1, userTurns, "one user turn: " + chat.conversation());

                Reply next = chat.send("Name three rivers.", null); // the chat is free again
                assertNotEquals(StopReason.CANCELLED, next.stopReason());
            }
        }
    }

    /**
     * Closing the engine, or the chat, while its reply's thread is between steps (in the listener) ends the reply
     * cancelled; the closed chat and engine then refuse with a GossException. Before: close freed the KV cache and the
     * reply's next step failed on freed memory (IllegalStateException "Already closed" on the reference backend).
     */
    @ParameterizedTest
    @ValueSource(strings = {"engine", "chat"})
    void closingWhileAReplyIsBetweenStepsEndsItCancelled(String closed) throws Exception {
        Engine engine = Engine.open(EngineOptions.of(model).withBackend("reference"));
        try {
            Chat chat = engine.newChat(options());
            Holding holding = new Holding(2);
            CompletableFuture<Reply> reply = sendAsync(chat, "Why is the sky blue?", holding);
            assertTrue(holding.reached.await(2, TimeUnit.MINUTES), "the reply is under way");
            if (closed.equals("engine")) engine.close();
            else chat.close();
            holding.go.countDown();
            Reply r = reply.get(2, TimeUnit.MINUTES);
            assertEquals(StopReason.CANCELLED, r.stopReason());
            assertEquals(2, r.tokens().length, "the reply ends after the token it was at");

            GossException e = assertThrows(GossException.class, () -> chat.send("again", null));
            assertTrue(e.getMessage().contains("closed"), e.getMessage());
            if (closed.equals("engine")) {
                assertTrue(assertThrows(GossException.class, () -> engine.newChat(options()))
                        .getMessage()
                        .contains("closed"));
            } else {
                assertEquals(0, engine.openSessions());
                try (Chat other = engine.newChat(options())) { // the engine goes on
                    assertNotEquals(
                            StopReason.CANCELLED,
                            other.send("Why is the sky blue?", null).stopReason());
                }
            }
        } finally {
            engine.close();
        }
    }
}
