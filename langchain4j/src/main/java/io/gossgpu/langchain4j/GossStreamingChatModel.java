package io.gossgpu.langchain4j;

import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.model.chat.StreamingChatModel;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.response.CompleteToolCall;
import dev.langchain4j.model.chat.response.PartialThinking;
import dev.langchain4j.model.chat.response.PartialToolCall;
import dev.langchain4j.model.chat.response.StreamingChatResponseHandler;
import io.gossgpu.api.Chat;
import io.gossgpu.api.ChatListener;
import io.gossgpu.api.ChatOptions;
import io.gossgpu.api.ChatPool;
import io.gossgpu.api.Conversation;
import io.gossgpu.api.Engine;
import io.gossgpu.api.EngineOptions;
import io.gossgpu.api.StopSequences;
import java.util.ArrayList;
import java.util.List;

/**
 * A LangChain4j {@link StreamingChatModel} that runs gpt-oss in this process with goss-gpu: the reply is generated on
 * a thread of its own ({@link Chat#sendAsync}) and streamed to the handler as it comes (text, thinking, tool call
 * arguments), then completed as {@link GossChatModel} would answer, with the request's own parameters as there. Text
 * that may begin a stop sequence is held back until it is clear it does not. Thread-safe, as {@link GossChatModel}.
 */
public final class GossStreamingChatModel implements StreamingChatModel, AutoCloseable {
    private final ModelChats chats;

    /** Replies with {@code engine} (which the caller keeps and closes) and these chat options. */
    public GossStreamingChatModel(Engine engine, ChatOptions options) {
        this.chats = new ModelChats(engine, false, options);
    }

    /** Replies with {@code engine} (which the caller keeps and closes) and {@link ChatOptions#defaults()}. */
    public GossStreamingChatModel(Engine engine) {
        this(engine, ChatOptions.defaults());
    }

    /** Opens the model {@code engineOptions} names; {@link #close()} closes it. */
    public static GossStreamingChatModel open(EngineOptions engineOptions, ChatOptions options) {
        return new GossStreamingChatModel(new ModelChats(Engine.open(engineOptions), true, options));
    }

    private GossStreamingChatModel(ModelChats chats) {
        this.chats = chats;
    }

    @Override
    public java.util.Set<dev.langchain4j.model.chat.Capability> supportedCapabilities() {
        return java.util.Set.of(dev.langchain4j.model.chat.Capability.RESPONSE_FORMAT_JSON_SCHEMA);
    }

    @Override
    public void doChat(ChatRequest request, StreamingChatResponseHandler handler) {
        Conversation conversation;
        ChatOptions options;
        ChatPool.Lease lease;
        Chat chat;
        try {
            conversation = Messages.conversation(request.messages(), request.toolSpecifications());
            options = RequestOptions.apply(chats.options(), request.parameters());
            lease = chats.take(conversation.promptTokens(options));
        } catch (RuntimeException e) {
            handler.onError(e);
            return;
        }
        try {
            chat = lease.chat();
        } catch (RuntimeException e) {
            lease.close();
            handler.onError(e);
            return;
        }
        List<String> callIds = new ArrayList<>();
        StopSequences stop = new StopSequences(request.stopSequences());
        ChatListener toHandler = new ChatListener() {
            @Override
            public void onContent(String delta) {
                String out = stop.accept(delta);
                if (!out.isEmpty()) handler.onPartialResponse(out);
                if (stop.stopped()) chat.cancel();
            }

            @Override
            public void onReasoning(String delta) {
                handler.onPartialThinking(new PartialThinking(delta));
            }

            @Override
            public void onToolCallStart(String fn) {
                callIds.add(Responses.callId());
            }

            @Override
            public void onToolCallDelta(String fn, String delta) {
                handler.onPartialToolCall(PartialToolCall.builder()
                        .index(callIds.size() - 1)
                        .id(callIds.getLast())
                        .name(fn)
                        .partialArguments(delta)
                        .build());
            }

            @Override
            public void onToolCall(String fn, String arguments) {
                // A call always begins with onToolCallStart; should one ever not, it gets an id here.
                if (callIds.isEmpty()) callIds.add(Responses.callId());
                handler.onCompleteToolCall(new CompleteToolCall(
                        callIds.size() - 1,
                        ToolExecutionRequest.builder()
                                .id(callIds.getLast())
                                .name(fn)
                                .arguments(arguments)
                                .build()));
            }
        };
        chat.sendAsync(conversation, options, toHandler).whenComplete((reply, error) -> {
            int promptTokens = chat.lastPromptTokens();
            lease.close();
            if (error != null) {
                handler.onError(error);
                return;
            }
            String rest = stop.flush();
            if (!rest.isEmpty()) handler.onPartialResponse(rest);
            handler.onCompleteResponse(Responses.response(reply, callIds, promptTokens, stop));
        });
    }

    /** Closes the chats, and the engine when this model opened it. */
    @Override
    public void close() {
        chats.close();
    }
}
