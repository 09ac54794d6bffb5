package io.gossgpu.springai;

import io.gossgpu.GossException;
import io.gossgpu.api.Chat;
import io.gossgpu.api.ChatListener;
import io.gossgpu.api.ChatOptions;
import io.gossgpu.api.ChatPool;
import io.gossgpu.api.Conversation;
import io.gossgpu.api.Engine;
import io.gossgpu.api.EngineOptions;
import io.gossgpu.api.Reply;
import io.gossgpu.api.StopSequences;
import java.util.concurrent.atomic.AtomicBoolean;
import org.springframework.ai.chat.model.ChatModel;
import org.springframework.ai.chat.model.ChatResponse;
import org.springframework.ai.chat.prompt.Prompt;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxSink;

/**
 * A Spring AI {@link ChatModel} that runs gpt-oss in this process with goss-gpu. The prompt's messages and the tool
 * definitions of its {@link org.springframework.ai.model.tool.ToolCallingChatOptions} go to the model as Harmony;
 * the reply comes back with its reasoning under the metadata key {@code thinking}, its tool calls as
 * {@link org.springframework.ai.chat.messages.AssistantMessage.ToolCall}s, token usage and a finish reason
 * ({@code stop}, {@code length}, {@code tool_calls}, {@code cancelled}). A request's maximum tokens, temperature,
 * top-p, top-k, frequency and presence penalties and stop sequences apply to it.
 *
 * <p>Tools are not executed here: as Spring AI 2.0's own models, this model returns the calls and
 * {@code ChatClient}'s {@code ToolCallingAdvisor} runs them and sends the results back (a caller of this model
 * alone runs them itself, with a {@code ToolCallingManager} or by hand).
 *
 * <p>Thread-safe: concurrent requests each get a chat of their own ({@link ChatPool}, {@value #SLOTS} at once;
 * more wait), and a conversation's next request goes to the chat that holds its history. {@link #stream}
 * generates on a thread of its own; cancelling the subscription stops the reply.
 */
public final class GossChatModel implements ChatModel, AutoCloseable {
    /** Chats the model keeps: as many requests run at once, and the next ones wait. */
    static final int SLOTS = 4;

    private final ChatPool chats;
    private final ChatOptions options;
    /** The engine when this model opened it, else null. */
    private final Engine ownedEngine;

    /** Replies with {@code engine} (which the caller keeps and closes) and these chat options as each request's defaults. */
    public GossChatModel(Engine engine, ChatOptions options) {
        this(engine, options, false);
    }

    /** Replies with {@code engine} (which the caller keeps and closes) and {@link ChatOptions#defaults()}. */
    public GossChatModel(Engine engine) {
        this(engine, ChatOptions.defaults());
    }

    /** Opens the model {@code engineOptions} names; {@link #close()} closes it. */
    public static GossChatModel open(EngineOptions engineOptions, ChatOptions options) {
        return new GossChatModel(Engine.open(engineOptions), options, true);
    }

    private GossChatModel(Engine engine, ChatOptions options, boolean ownsEngine) {
        try {
            this.chats = new ChatPool(engine, options, SLOTS);
        } catch (RuntimeException e) {
            if (ownsEngine) engine.close();
            throw e;
        }
        this.options = options;
        this.ownedEngine = ownsEngine ? engine : null;
    }

    /** The slot for a request with {@code prompt}, waiting while all are busy. */
    private ChatPool.Lease take(int[] prompt) {
        try {
            return chats.take(prompt);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new GossException("interrupted while waiting for a free chat", e);
        }
    }

    @Override
    public org.springframework.ai.chat.prompt.ChatOptions getOptions() {
        return RequestOptions.defaults(options);
    }

    @Override
    public ChatResponse call(Prompt prompt) {
        RequestOptions req = RequestOptions.of(options, prompt.getOptions());
        Conversation conversation = Messages.conversation(prompt.getInstructions(), req.tools());
        try (ChatPool.Lease lease = take(conversation.promptTokens(req.chat()))) {
            Chat chat = lease.chat();
            StopSequences stops = new StopSequences(req.stopSequences());
            ChatListener watch = new ChatListener() {
                @Override
                public void onContent(String delta) {
                    stops.accept(delta);
                    if (stops.stopped()) chat.cancel(); // the answer is complete: spend no more tokens
                }
            };
            Reply reply =
                    chat.send(conversation, req.chat(), req.stopSequences().isEmpty() ? null : watch);
            StopSequences cut = new StopSequences(req.stopSequences());
            String content = cut.cut(reply.content());
            return Responses.whole(reply, content, cut.stopped(), chat.lastPromptTokens());
        }
    }

    /**
     * The reply as it is generated: a response for each piece of answer text or reasoning ({@code thinking} in the
     * message metadata: that piece), then one with the tool calls, the finish reason and the usage. Spring AI's
     * {@code MessageAggregator} adds them up to what {@link #call} answers.
     */
    @Override
    public Flux<ChatResponse> stream(Prompt prompt) {
        return Flux.create(
                sink -> {
                    RequestOptions req;
                    Conversation conversation;
                    ChatPool.Lease lease;
                    try {
                        req = RequestOptions.of(options, prompt.getOptions());
                        conversation = Messages.conversation(prompt.getInstructions(), req.tools());
                        lease = take(conversation.promptTokens(req.chat()));
                    } catch (RuntimeException e) {
                        sink.error(e);
                        return;
                    }
                    try {
                        generate(sink, req, conversation, lease, lease.chat());
                    } catch (RuntimeException e) {
                        lease.close();
                        sink.error(e);
                    }
                },
                FluxSink.OverflowStrategy.BUFFER);
    }

    private void generate(
            FluxSink<ChatResponse> sink,
            RequestOptions req,
            Conversation conversation,
            ChatPool.Lease lease,
            Chat chat) {
        StopSequences stops = new StopSequences(req.stopSequences());
        AtomicBoolean stopped = new AtomicBoolean(); // the subscriber cancelled, or a stop sequence ended the answer
        sink.onDispose(() -> {
            if (stopped.compareAndSet(false, true)) chat.cancel();
        });
        ChatListener toSink = new ChatListener() {
            @Override
            public void onToken(int token) {
                if (stopped.get()) chat.cancel(); // a cancel before the reply began is seen here
            }

            @Override
            public void onContent(String delta) {
                String out = stops.accept(delta);
                if (!out.isEmpty()) sink.next(Responses.delta(out, ""));
                if (stops.stopped() && stopped.compareAndSet(false, true)) chat.cancel();
            }

            @Override
            public void onReasoning(String delta) {
                if (!stops.stopped()) sink.next(Responses.delta("", delta));
            }
        };
        // The chat goes back to the pool only once its reply has ended (a cancelled one too).
        chat.sendAsync(conversation, req.chat(), toSink).whenComplete((reply, error) -> {
            // The reply has ended: the sink's disposal (on complete, below) must not cancel the chat once it is back in
            // the pool, where the next request's reply would start cancelled and come back empty.
            stopped.set(true);
            int promptTokens = chat.lastPromptTokens();
            lease.close();
            if (error != null) {
                sink.error(error);
                return;
            }
            String rest = stops.flush();
            if (!rest.isEmpty()) sink.next(Responses.delta(rest, ""));
            sink.next(Responses.last(reply, stops.stopped(), promptTokens));
            sink.complete();
        });
    }

    /** Closes the chats, and the engine when this model opened it. */
    @Override
    public void close() {
        chats.close();
        if (ownedEngine != null) ownedEngine.close();
    }
}
