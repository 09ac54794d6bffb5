package io.gossgpu.harmony;

import io.gossgpu.ReasoningEffort;
import java.time.LocalDate;
import java.util.List;

/**
 * Content of the system message: model identity, dates, reasoning effort and the valid channels.
 * Null fields are left out of the rendering.
 */
public record SystemContent(
        String modelIdentity,
        String knowledgeCutoff,
        String currentDate,
        ReasoningEffort reasoningEffort,
        List<String> validChannels,
        boolean channelRequired) {

    public static final String DEFAULT_IDENTITY = "You are ChatGPT, a large language model trained by OpenAI.";
    public static final String DEFAULT_KNOWLEDGE_CUTOFF = "2024-06";
    public static final List<String> DEFAULT_CHANNELS = List.of("analysis", "commentary", "final");

    public SystemContent {
        validChannels = validChannels == null ? List.of() : List.copyOf(validChannels);
    }

    /** The system message gpt-oss was trained with: identity, cutoff 2024-06, the given date and effort, three channels. */
    public static SystemContent defaults(LocalDate currentDate, ReasoningEffort effort) {
        return new SystemContent(
                DEFAULT_IDENTITY, DEFAULT_KNOWLEDGE_CUTOFF, currentDate.toString(), effort, DEFAULT_CHANNELS, true);
    }

    public SystemContent withReasoningEffort(ReasoningEffort e) {
        return new SystemContent(modelIdentity, knowledgeCutoff, currentDate, e, validChannels, channelRequired);
    }

    public SystemContent withCurrentDate(String date) {
        return new SystemContent(modelIdentity, knowledgeCutoff, date, reasoningEffort, validChannels, channelRequired);
    }
}
