package io.gossgpu.api;

import io.gossgpu.Timings;
import io.gossgpu.generate.GenerationResult;
import java.util.List;

/**
 * One reply: the user-facing text, the reasoning, tool calls, why it stopped, and timings.
 *
 * @param content   final-channel text (chat) or the whole completion (raw)
 * @param reasoning analysis-channel text ("" in raw mode)
 * @param tokens    every token generated, the last one included
 */
public record Reply(
        String content,
        String reasoning,
        List<ToolCall> toolCalls,
        int[] tokens,
        StopReason stopReason,
        Timings timings) {
    public record ToolCall(String functionName, String arguments) {}

    /** The reply to a generation's {@code r} (where the api meets io.gossgpu.generate's result). */
    static Reply of(String content, String reasoning, List<ToolCall> toolCalls, GenerationResult r) {
        return new Reply(
                content, reasoning, List.copyOf(toolCalls), r.tokens(), StopReason.of(r.stopReason()), r.timings());
    }
}
