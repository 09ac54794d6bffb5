package io.gossgpu.api;

import io.gossgpu.generate.GenerationResult;
import io.gossgpu.generate.Timings;

import java.util.List;

/**
 * One reply: the user-facing text, the reasoning, tool calls, why it stopped, and timings.
 *
 * @param content   final-channel text (chat) or the whole completion (raw)
 * @param reasoning analysis-channel text ("" in raw mode)
 */
public record Reply(String content, String reasoning, List<ToolCall> toolCalls, int[] tokens,
                    GenerationResult.StopReason stopReason, Timings timings) {
    public record ToolCall(String functionName, String arguments) {}
}
