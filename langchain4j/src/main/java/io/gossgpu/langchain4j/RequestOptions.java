package io.gossgpu.langchain4j;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.langchain4j.internal.JsonSchemaElementUtils;
import dev.langchain4j.model.chat.request.ChatRequestParameters;
import dev.langchain4j.model.chat.request.ResponseFormat;
import dev.langchain4j.model.chat.request.ResponseFormatType;
import dev.langchain4j.model.chat.request.ToolChoice;
import io.gossgpu.api.ChatOptions;
import io.gossgpu.api.Sampling;
import io.gossgpu.api.StopSequences;

/**
 * One request's parameters over the model's {@link ChatOptions}: temperature, top-p, top-k, the penalties, the output token limit
 * and the response format (JSON, or JSON under the request's schema, through goss-gpu's structured outputs) are the
 * request's where it sets them, the model's otherwise. Tool specifications go with the conversation
 * ({@link Messages}); stop sequences are cut by {@link StopSequences}; frequency and presence penalties go into the
 * sampling ({@link Sampling#withPenalties}). {@code toolChoice} REQUIRED makes the reply a call to one of the request's
 * tools, its arguments held to the tool's parameters ({@link io.gossgpu.api.ToolChoice#required()}); AUTO leaves the
 * call to the model.
 */
final class RequestOptions {
    private static final ObjectMapper JSON = new ObjectMapper();

    private RequestOptions() {}

    static ChatOptions apply(ChatOptions base, ChatRequestParameters p) {
        if (p == null) return base;
        ChatOptions o = base;
        if (p.toolChoice() == ToolChoice.REQUIRED) o = o.withToolChoice(io.gossgpu.api.ToolChoice.required());
        else if (p.toolChoice() == ToolChoice.AUTO) o = o.withToolChoice(io.gossgpu.api.ToolChoice.auto());
        Sampling s = o.sampling();
        if (p.temperature() != null) s = s.withTemperature(p.temperature().floatValue());
        if (p.topP() != null) s = s.withTopP(p.topP().floatValue());
        if (p.topK() != null) s = s.withTopK(p.topK());
        if (p.frequencyPenalty() != null || p.presencePenalty() != null)
            s = s.withPenalties(presencePenalty(p), frequencyPenalty(p));
        if (s != o.sampling()) o = o.withSampling(s);
        if (p.maxOutputTokens() != null) o = o.withMaxTokens(p.maxOutputTokens());
        ResponseFormat f = p.responseFormat();
        if (f != null) {
            if (f.type() == ResponseFormatType.TEXT) o = o.withResponseFormat(null);
            else if (f.jsonSchema() == null || f.jsonSchema().rootElement() == null) o = o.withJsonObject();
            else o = o.withJsonSchema(schema(f));
        }
        return o;
    }

    /** The request's frequency penalty as the engine takes it (OpenAI's, −2..2; 0 when unset). */
    static float frequencyPenalty(ChatRequestParameters p) {
        return penalty("frequencyPenalty", p == null ? null : p.frequencyPenalty());
    }

    /** The request's presence penalty as the engine takes it (OpenAI's, −2..2; 0 when unset). */
    static float presencePenalty(ChatRequestParameters p) {
        return penalty("presencePenalty", p == null ? null : p.presencePenalty());
    }

    private static float penalty(String name, Double value) {
        if (value == null) return 0;
        if (!(value >= -2 && value <= 2))
            throw new IllegalArgumentException(name + " must be between -2 and 2, got " + value);
        return value.floatValue();
    }

    private static String schema(ResponseFormat f) {
        try {
            return JSON.writeValueAsString(
                    JsonSchemaElementUtils.toMap(f.jsonSchema().rootElement()));
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("response format '"
                    + f.jsonSchema().name() + "': cannot write its schema as JSON: " + e.getOriginalMessage());
        }
    }
}
