package io.gossgpu.api;

import io.gossgpu.harmony.Message;

/** A {@link Turn} as the Harmony message a chat renders (internal: the API does not show io.gossgpu.harmony). */
final class TurnMessages {
    private TurnMessages() {}

    static Message of(Turn t) {
        return switch (t) {
            case Turn.User u -> Message.user(u.text());
            case Turn.Assistant a -> Message.assistant("final", a.text());
            case Turn.Commentary c -> Message.assistant("commentary", c.text());
            case Turn.Reasoning r -> Message.assistant("analysis", r.text());
            case Turn.ToolCall c -> Message.toolCall(c.functionName(), c.arguments());
            case Turn.ToolResult r -> Message.toolResult(r.functionName(), r.output());
        };
    }
}
