package io.gossgpu.server;

import com.fasterxml.jackson.databind.JsonNode;
import io.gossgpu.generate.LogitAdjustments;
import io.gossgpu.tokenizer.O200kHarmony;

import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;

/**
 * The {@code logit_bias} (token id → −100..100), {@code presence_penalty} and {@code frequency_penalty} (−2..2),
 * as OpenAI defines them (see {@link LogitAdjustments}), read the same way for chat completions, completions and
 * Responses; anything out of range is a 400 naming the field.
 */
final class SamplingFields {
    private SamplingFields() {}

    /** The request's adjustments, or null when it asks for none. */
    static LogitAdjustments adjustments(JsonNode body) {
        Map<Integer, Float> bias = new HashMap<>();
        JsonNode b = body.get("logit_bias");
        if (b != null && !b.isNull()) {
            if (!b.isObject()) throw ApiError.badRequest("logit_bias", "'logit_bias' must be an object of token id to bias");
            for (Iterator<Map.Entry<String, JsonNode>> it = b.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> e = it.next();
                int id;
                try {
                    id = Integer.parseInt(e.getKey());
                } catch (NumberFormatException x) {
                    throw ApiError.badRequest("logit_bias", "'logit_bias' key '" + e.getKey() + "' is not a token id");
                }
                if (id < 0 || id >= O200kHarmony.VOCAB_SIZE)
                    throw ApiError.badRequest("logit_bias", "'logit_bias' token id " + id + " is outside the vocabulary (0.." + (O200kHarmony.VOCAB_SIZE - 1) + ")");
                JsonNode v = e.getValue();
                if (!v.isNumber() || v.asDouble() < -100 || v.asDouble() > 100)
                    throw ApiError.badRequest("logit_bias", "'logit_bias' values must be numbers in [-100, 100], got " + v + " for token " + id);
                bias.put(id, v.floatValue());
            }
        }
        float presence = penalty(body, "presence_penalty"), frequency = penalty(body, "frequency_penalty");
        LogitAdjustments a = new LogitAdjustments(bias, presence, frequency);
        return a.isNone() ? null : a;
    }

    private static float penalty(JsonNode body, String field) {
        JsonNode v = body.get(field);
        if (v == null || v.isNull()) return 0;
        if (!v.isNumber() || v.asDouble() < -2 || v.asDouble() > 2)
            throw ApiError.badRequest(field, "'" + field + "' must be a number in [-2, 2], got " + v);
        return v.floatValue();
    }
}
