package io.gossgpu.server;

import com.fasterxml.jackson.databind.JsonNode;
import io.gossgpu.api.Sampling;
import io.gossgpu.api.Tokens;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;

/**
 * The {@code logit_bias} (token id → −100..100), {@code presence_penalty} and {@code frequency_penalty} (−2..2),
 * as OpenAI defines them (see {@link Sampling}), read the same way for chat completions, completions and
 * Responses; anything out of range is a 400 naming the field.
 */
final class SamplingFields {
    private SamplingFields() {}

    /** {@code sampling} with the request's logit bias and penalties. */
    static Sampling adjusted(JsonNode body, Sampling sampling) {
        Map<Integer, Float> bias = new HashMap<>();
        JsonNode b = body.get("logit_bias");
        if (b != null && !b.isNull()) {
            if (!b.isObject())
                throw ApiError.badRequest("logit_bias", "'logit_bias' must be an object of token id to bias");
            for (Iterator<Map.Entry<String, JsonNode>> it = b.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> e = it.next();
                int id;
                try {
                    id = Integer.parseInt(e.getKey());
                } catch (NumberFormatException x) {
                    throw ApiError.badRequest("logit_bias", "'logit_bias' key '" + e.getKey() + "' is not a token id");
                }
                if (id < 0 || id >= Tokens.VOCAB_SIZE)
                    throw ApiError.badRequest(
                            "logit_bias",
                            "'logit_bias' token id " + id + " is outside the vocabulary (0.." + (Tokens.VOCAB_SIZE - 1)
                                    + ")");
                JsonNode v = e.getValue();
                if (!v.isNumber() || v.asDouble() < -100 || v.asDouble() > 100)
                    throw ApiError.badRequest(
                            "logit_bias",
                            "'logit_bias' values must be numbers in [-100, 100], got " + v + " for token " + id);
                bias.put(id, v.floatValue());
            }
        }
        float presence = penalty(body, "presence_penalty"), frequency = penalty(body, "frequency_penalty");
        return sampling.withLogitBias(bias).withPenalties(presence, frequency);
    }

    private static float penalty(JsonNode body, String field) {
        JsonNode v = body.get(field);
        if (v == null || v.isNull()) return 0;
        if (!v.isNumber() || v.asDouble() < -2 || v.asDouble() > 2)
            throw ApiError.badRequest(field, "'" + field + "' must be a number in [-2, 2], got " + v);
        return v.floatValue();
    }
}
