package io.gossgpu.langchain4j;

import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.model.chat.response.ChatResponse;
import dev.langchain4j.model.output.FinishReason;
import dev.langchain4j.model.output.TokenUsage;
import io.gossgpu.api.Reply;
import io.gossgpu.api.StopSequences;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/** goss-gpu's {@link Reply} as LangChain4j's {@link ChatResponse}: the answer, the reasoning as thinking, tool calls, usage and finish reason. */
final class Responses {
    static final String MODEL_NAME = "gpt-oss";

    private Responses() {}

    /** A call's id: Harmony has none, LangChain4j matches results to calls by it. */
    static String callId() {
        return "call_" + UUID.randomUUID().toString().replace("-", "").substring(0, 24);
    }

    /** {@code r} with the answer cut at a stop sequence ({@code stop.stopped()}: its text, finish reason STOP). */
    static ChatResponse response(Reply r, List<String> callIds, int promptTokens, StopSequences stop) {
        List<ToolExecutionRequest> calls = new ArrayList<>();
        for (int i = 0; i < r.toolCalls().size(); i++) {
            Reply.ToolCall c = r.toolCalls().get(i);
            calls.add(ToolExecutionRequest.builder()
                    .id(i < callIds.size() ? callIds.get(i) : callId())
                    .name(c.functionName())
                    .arguments(c.arguments())
                    .build());
        }
        String content = stop.stopped() ? stop.text() : r.content();
        AiMessage.Builder message = AiMessage.builder().text(content.isEmpty() && !calls.isEmpty() ? null : content);
        if (!r.reasoning().isEmpty()) message.thinking(r.reasoning());
        if (!calls.isEmpty()) message.toolExecutionRequests(calls);
        return ChatResponse.builder()
                .aiMessage(message.build())
                .modelName(MODEL_NAME)
                .tokenUsage(new TokenUsage(promptTokens, r.tokens().length))
                .finishReason(stop.stopped() && calls.isEmpty() ? FinishReason.STOP : finishReason(r))
                .build();
    }

    static FinishReason finishReason(Reply r) {
        if (!r.toolCalls().isEmpty()) return FinishReason.TOOL_EXECUTION;
        return switch (r.stopReason()) {
            case STOP_TOKEN -> FinishReason.STOP;
            case MAX_TOKENS, CONTEXT_FULL -> FinishReason.LENGTH;
            case CANCELLED -> FinishReason.OTHER;
        };
    }
}
