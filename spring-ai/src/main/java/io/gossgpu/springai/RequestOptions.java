package io.gossgpu.springai;

import io.gossgpu.api.ChatOptions;
import io.gossgpu.api.Sampling;
import java.util.List;
import org.springframework.ai.model.tool.ToolCallingChatOptions;
import org.springframework.ai.tool.ToolCallback;
import org.springframework.ai.tool.definition.ToolDefinition;

/**
 * What one Spring AI request asks of goss-gpu: the model's {@link ChatOptions} with the request's maximum tokens,
 * temperature, top-p, top-k and its frequency and presence penalties (OpenAI's, −2..2, 0 when unset; see
 * {@link Sampling}); its stop sequences; and the tools its {@link ToolCallingChatOptions} carry.
 */
record RequestOptions(ChatOptions chat, List<String> stopSequences, List<ToolDefinition> tools) {

    static RequestOptions of(ChatOptions base, org.springframework.ai.chat.prompt.ChatOptions o) {
        if (o == null) return new RequestOptions(base, List.of(), List.of());
        float frequency = penalty("frequencyPenalty", o.getFrequencyPenalty());
        float presence = penalty("presencePenalty", o.getPresencePenalty());
        ChatOptions chat = base;
        if (o.getMaxTokens() != null) {
            if (o.getMaxTokens() <= 0)
                throw new IllegalArgumentException("maxTokens must be positive, got " + o.getMaxTokens());
            chat = chat.withMaxTokens(o.getMaxTokens());
        }
        Sampling s = base.sampling();
        float temperature = o.getTemperature() != null ? o.getTemperature().floatValue() : s.temperature();
        int topK = o.getTopK() != null ? o.getTopK() : s.topK();
        float topP = o.getTopP() != null ? o.getTopP().floatValue() : s.topP();
        Sampling sampling = s.withTemperature(temperature)
                .withTopK(topK)
                .withTopP(topP)
                .withPenalties(
                        o.getPresencePenalty() != null ? presence : s.presencePenalty(),
                        o.getFrequencyPenalty() != null ? frequency : s.frequencyPenalty());
        if (!sampling.equals(s)) chat = chat.withSampling(sampling);
        List<String> stops = o.getStopSequences() == null ? List.of() : List.copyOf(o.getStopSequences());
        List<ToolDefinition> tools = List.of();
        if (o instanceof ToolCallingChatOptions t && t.getToolCallbacks() != null)
            tools = t.getToolCallbacks().stream()
                    .map(ToolCallback::getToolDefinition)
                    .toList();
        return new RequestOptions(chat, stops, tools);
    }

    /** A penalty as the engine takes it: 0 when unset, refused outside OpenAI's range −2..2. */
    private static float penalty(String name, Double value) {
        if (value == null) return 0;
        if (!(value >= -2 && value <= 2))
            throw new IllegalArgumentException(name + " must be between -2 and 2, got " + value);
        return value.floatValue();
    }

    /** The model's defaults as Spring AI options (which ChatClient copies into each request and adds tools to). */
    static ToolCallingChatOptions defaults(ChatOptions base) {
        Sampling s = base.sampling();
        return ToolCallingChatOptions.builder()
                .model(Responses.MODEL_NAME)
                .maxTokens(base.maxTokens())
                .temperature((double) s.temperature())
                .topP((double) s.topP())
                .topK(s.topK())
                .build();
    }
}
