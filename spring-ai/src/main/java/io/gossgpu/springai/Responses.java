package io.gossgpu.springai;

import io.gossgpu.api.Reply;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.springframework.ai.chat.messages.AssistantMessage;
import org.springframework.ai.chat.metadata.ChatGenerationMetadata;
import org.springframework.ai.chat.metadata.ChatResponseMetadata;
import org.springframework.ai.chat.metadata.DefaultUsage;
import org.springframework.ai.chat.model.ChatResponse;
import org.springframework.ai.chat.model.Generation;

/** goss-gpu's {@link Reply} as Spring AI's {@link ChatResponse}: the answer, the reasoning, tool calls, usage and finish reason. */
final class Responses {
    /** The key of the reasoning (Harmony's analysis channel) in the message's and the generation's metadata, as Spring AI's Ollama model names it. */
    static final String THINKING = "thinking";

    static final String MODEL_NAME = "gpt-oss";

    private Responses() {}

    /** A call's id: Harmony has none, Spring AI matches tool responses to calls by it. */
    static String callId() {
        return "call_" + UUID.randomUUID().toString().replace("-", "").substring(0, 24);
    }

    /**
     * The whole reply as one response. {@code content} is the answer as the caller sees it (cut at a stop sequence),
     * {@code stoppedBySequence} whether it was.
     */
    static ChatResponse whole(Reply r, String content, boolean stoppedBySequence, int promptTokens) {
        List<AssistantMessage.ToolCall> calls = new ArrayList<>();
        for (Reply.ToolCall c : r.toolCalls())
            calls.add(new AssistantMessage.ToolCall(callId(), "function", c.functionName(), c.arguments()));
        Map<String, Object> props = r.reasoning().isEmpty() ? Map.of() : Map.of(THINKING, r.reasoning());
        AssistantMessage message = AssistantMessage.builder()
                .content(content)
                .properties(props)
                .toolCalls(calls)
                .build();
        ChatGenerationMetadata.Builder gen =
                ChatGenerationMetadata.builder().finishReason(finishReason(r, stoppedBySequence));
        if (!r.reasoning().isEmpty()) gen.metadata(THINKING, r.reasoning());
        return new ChatResponse(List.of(new Generation(message, gen.build())), metadata(r, promptTokens));
    }

    /** A streamed piece: answer text and reasoning as they came, no finish reason yet. */
    static ChatResponse delta(String content, String reasoning) {
        Map<String, Object> props = reasoning.isEmpty() ? Map.of() : Map.of(THINKING, reasoning);
        AssistantMessage message =
                AssistantMessage.builder().content(content).properties(props).build();
        return new ChatResponse(
                List.of(new Generation(message)),
                ChatResponseMetadata.builder().model(MODEL_NAME).build());
    }

    /** The last streamed piece: the tool calls, the finish reason and the usage (the text came before). */
    static ChatResponse last(Reply r, boolean stoppedBySequence, int promptTokens) {
        List<AssistantMessage.ToolCall> calls = new ArrayList<>();
        for (Reply.ToolCall c : r.toolCalls())
            calls.add(new AssistantMessage.ToolCall(callId(), "function", c.functionName(), c.arguments()));
        AssistantMessage message =
                AssistantMessage.builder().content("").toolCalls(calls).build();
        ChatGenerationMetadata gen = ChatGenerationMetadata.builder()
                .finishReason(finishReason(r, stoppedBySequence))
                .build();
        return new ChatResponse(List.of(new Generation(message, gen)), metadata(r, promptTokens));
    }

    private static ChatResponseMetadata metadata(Reply r, int promptTokens) {
        return ChatResponseMetadata.builder()
                .model(MODEL_NAME)
                .usage(new DefaultUsage(promptTokens, r.tokens().length))
                .build();
    }

    /** OpenAI's finish reasons, which Spring AI's other models report too. */
    static String finishReason(Reply r, boolean stoppedBySequence) {
        if (!r.toolCalls().isEmpty()) return "tool_calls";
        if (stoppedBySequence) return "stop";
        return switch (r.stopReason()) {
            case STOP_TOKEN -> "stop";
            case MAX_TOKENS, CONTEXT_FULL -> "length";
            case CANCELLED -> "cancelled";
        };
    }
}
