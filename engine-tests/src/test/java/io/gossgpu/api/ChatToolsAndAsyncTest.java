package io.gossgpu.api;

import static io.gossgpu.api.TestTools.ADD;
import static io.gossgpu.api.TestTools.WEATHER;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.gossgpu.demo.DemoEngine;
import io.gossgpu.testkit.DemoModels;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Flow;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The core API on the demo model (cpu backend, greedy): tools declared with {@link Tool} and their calls and
 * results as API types (no Harmony message in sight), {@link Chat#sendAsync} giving what {@link Chat#send} gives,
 * {@link Chat#stream}'s events adding up to the reply, and a cancelled future stopping the reply.
 */
class ChatToolsAndAsyncTest {
    static final ObjectMapper JSON = new ObjectMapper();

    @RegisterExtension
    static final DemoEngine DEMO = new DemoEngine();

    static Chat greedyChat() {
        return DEMO.engine()
                .newChat(ChatOptions.defaults().withSampling(Sampling.greedy()).withMaxTokens(DemoModels.MAX_TOKENS));
    }

    @Test
    void offeredToolIsCalledAndItsResultAnswered() throws Exception {
        try (Chat chat = greedyChat()) {
            chat.offerTools(List.of(WEATHER, ADD));
            Reply call = chat.send("What's the weather in Paris?", null);
            assertEquals(1, call.toolCalls().size(), call.toString());
            assertEquals("get_weather", call.toolCalls().get(0).functionName());
            assertEquals(
                    JSON.readTree("{\"city\":\"Paris\"}"),
                    JSON.readTree(call.toolCalls().get(0).arguments()));
            Reply answer = chat.sendToolResult(
                    "get_weather", "{\"city\":\"Paris\",\"temperature_c\":21,\"condition\":\"cloudy\"}", null);
            assertTrue(answer.content().contains("21°C and cloudy"), answer.content());
            assertTrue(answer.toolCalls().isEmpty());
        }
    }

    @Test
    void wholeConversationWithToolsAndTheResultAsTurns() throws Exception {
        try (Chat chat = greedyChat()) {
            List<Turn> turns = new ArrayList<>(List.of(new Turn.User("What is 38 + 47?")));
            Reply call = chat.send(new Conversation("Answer briefly.", List.of(ADD), turns), null);
            assertEquals("add", call.toolCalls().get(0).functionName());
            assertEquals(
                    JSON.readTree("{\"a\":38,\"b\":47}"),
                    JSON.readTree(call.toolCalls().get(0).arguments()));
            turns.add(Turn.ToolCall.of(call.toolCalls().get(0)));
            turns.add(new Turn.ToolResult("add", "85"));
            Reply answer = chat.send(new Conversation("Answer briefly.", List.of(ADD), turns), null);
            assertTrue(answer.content().contains("85"), answer.content());
            assertTrue(
                    chat.lastPrefillTokens() < 40,
                    "the cache kept the conversation so far: prefilled " + chat.lastPrefillTokens());
        }
    }

    @Test
    void toolWithABadSchemaIsRefusedWhenDeclared() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new Tool("f", "", "{not json"));
        assertTrue(e.getMessage().startsWith("tool 'f': the parameters schema is not JSON"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new Tool("f", "", "[1]"));
    }

    @Test
    void sendAsyncGivesWhatSendGives() throws Exception {
        Reply sync, async;
        try (Chat chat = greedyChat()) {
            sync = chat.send("What is 17 + 25?", null);
        }
        StringBuilder streamed = new StringBuilder();
        try (Chat chat = greedyChat()) {
            async = chat.sendAsync("What is 17 + 25?", new ChatListener() {
                        @Override
                        public void onContent(String d) {
                            streamed.append(d);
                        }
                    })
                    .get(60, TimeUnit.SECONDS);
        }
        assertArrayEquals(sync.tokens(), async.tokens());
        assertEquals(sync.content(), async.content());
        assertEquals(sync.content(), streamed.toString());
        assertTrue(async.content().contains("42"), async.content());
    }

    /** Subscribes to {@code p}, one event at a time, and waits for the end. */
    static List<ReplyEvent> collect(Flow.Publisher<ReplyEvent> p) throws Exception {
        List<ReplyEvent> events = new ArrayList<>();
        CompletableFuture<Void> done = new CompletableFuture<>();
        p.subscribe(new Flow.Subscriber<>() {
            Flow.Subscription s;

            @Override
            public void onSubscribe(Flow.Subscription s) {
                this.s = s;
                s.request(1);
            }

            @Override
            public void onNext(ReplyEvent e) {
                events.add(e);
                s.request(1);
            }

            @Override
            public void onError(Throwable t) {
                done.completeExceptionally(t);
            }

            @Override
            public void onComplete() {
                done.complete(null);
            }
        });
        done.get(60, TimeUnit.SECONDS);
        return events;
    }

    @Test
    void publishedEventsAddUpToTheReply() throws Exception {
        List<ReplyEvent> events;
        try (Chat chat = greedyChat()) {
            events = collect(chat.stream("What is 17 + 25?"));
        }
        Reply reply = assertInstanceOf(ReplyEvent.Done.class, events.getLast()).reply();
        StringBuilder content = new StringBuilder(), reasoning = new StringBuilder();
        for (ReplyEvent e : events) {
            if (e instanceof ReplyEvent.Content c) content.append(c.delta());
            if (e instanceof ReplyEvent.Reasoning r) reasoning.append(r.delta());
        }
        assertEquals(reply.content(), content.toString());
        assertEquals(reply.reasoning(), reasoning.toString());
        assertTrue(reply.reasoning().contains("7 + 5 = 12"), reply.reasoning());
        assertTrue(reply.content().contains("42"), reply.content());
        assertTrue(events.stream().filter(e -> e instanceof ReplyEvent.Content).count() > 1, "streamed in pieces");
    }

    @Test
    void publishedToolCallIsTheReplysCall() throws Exception {
        List<ReplyEvent> events;
        try (Chat chat = greedyChat()) {
            events = collect(chat.stream(
                    new Conversation("Answer briefly.", List.of(ADD), List.of(new Turn.User("What is 38 + 47?")))));
        }
        Reply reply = assertInstanceOf(ReplyEvent.Done.class, events.getLast()).reply();
        List<Reply.ToolCall> published = events.stream()
                .filter(e -> e instanceof ReplyEvent.ToolCall)
                .map(e -> ((ReplyEvent.ToolCall) e).call())
                .toList();
        assertEquals(1, published.size());
        assertEquals(reply.toolCalls(), published);
        assertEquals("add", published.get(0).functionName());
    }

    @Test
    void cancellingTheFutureStopsTheReply() throws Exception {
        CountDownLatch firstToken = new CountDownLatch(1), cancelled = new CountDownLatch(1);
        try (Chat chat = greedyChat()) {
            CompletableFuture<Reply> f = chat.sendAsync("What is 17 + 25?", new ChatListener() {
                @Override
                public void onToken(int t) {
                    firstToken.countDown();
                    try {
                        cancelled.await();
                    } catch (InterruptedException e) {
                        throw new RuntimeException(e);
                    }
                }
            });
            assertTrue(firstToken.await(60, TimeUnit.SECONDS));
            assertTrue(f.cancel(true));
            cancelled.countDown();
            Reply stopped = ((AsyncReplies.ReplyFuture) f).generated.get(60, TimeUnit.SECONDS);
            assertEquals(StopReason.CANCELLED, stopped.stopReason());
            assertTrue(stopped.tokens().length <= 2, "stopped at once: " + stopped.tokens().length + " tokens");
            assertTrue(f.isCancelled());
        }
    }
}
