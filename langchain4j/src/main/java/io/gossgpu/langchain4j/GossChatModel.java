package io.gossgpu.langchain4j;

import dev.langchain4j.model.chat.Capability;
import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.response.ChatResponse;
import io.gossgpu.api.Chat;
import io.gossgpu.api.ChatListener;
import io.gossgpu.api.ChatOptions;
import io.gossgpu.api.ChatPool;
import io.gossgpu.api.Engine;
import io.gossgpu.api.EngineOptions;
import io.gossgpu.api.Reply;
import io.gossgpu.api.StopSequences;
import java.util.List;
import java.util.Set;

/**
 * A LangChain4j {@link ChatModel} that runs gpt-oss in this process with goss-gpu. Messages, tool specifications
 * and tool results go to the model as Harmony; the reply comes back with its reasoning as the AI message's
 * thinking, its tool calls as tool execution requests, token usage and a finish reason. A request's parameters
 * (temperature, top-p, top-k, maximum output tokens, frequency and presence penalties, stop sequences, response format,
 * tools) apply to that request;
 * what it leaves unset is the {@link ChatOptions}' ({@link RequestOptions}). Thread-safe: concurrent requests each
 * get a chat of their own ({@link ChatPool}, {@value ModelChats#SLOTS} at once; more wait), and a conversation's
 * next request goes to the chat that holds its history.
 */
public final class GossChatModel implements ChatModel, AutoCloseable {
    private final ModelChats chats;

    /** Replies with {@code engine} (which the caller keeps and closes) and these chat options. */
    public GossChatModel(Engine engine, ChatOptions options) {
        this.chats = new ModelChats(engine, false, options);
    }

    /** Replies with {@code engine} (which the caller keeps and closes) and {@link ChatOptions#defaults()}. */
    public GossChatModel(Engine engine) {
        this(engine, ChatOptions.defaults());
    }

    /** Opens the model {@code engineOptions} names; {@link #close()} closes it. */
    public static GossChatModel open(EngineOptions engineOptions, ChatOptions options) {
        return new GossChatModel(new ModelChats(Engine.open(engineOptions), true, options));
    }

    private GossChatModel(ModelChats chats) {
        this.chats = chats;
    }

    @Override
    public Set<Capability> supportedCapabilities() {
        return Set.of(Capability.RESPONSE_FORMAT_JSON_SCHEMA);
    }

    @Override
    public ChatResponse doChat(ChatRequest request) {
        var conversation = Messages.conversation(request.messages(), request.toolSpecifications());
        ChatOptions options = RequestOptions.apply(chats.options(), request.parameters());
        StopSequences stop = new StopSequences(request.stopSequences());
        try (ChatPool.Lease lease = chats.take(conversation.promptTokens(options))) {
            Chat chat = lease.chat();
            Reply reply = chat.send(conversation, options, new ChatListener() {
                @Override
                public void onContent(String delta) {
                    stop.accept(delta);
                    if (stop.stopped()) chat.cancel();
                }
            });
            return Responses.response(reply, List.of(), chat.lastPromptTokens(), stop);
        }
    }

    /** Closes the chats, and the engine when this model opened it. */
    @Override
    public void close() {
        chats.close();
    }
}
