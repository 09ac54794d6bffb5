package io.gossgpu.server;

import com.fasterxml.jackson.databind.JsonNode;
import io.gossgpu.ReasoningEffort;
import io.gossgpu.api.Sampling;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

/** Reading and checking the fields that OpenAI requests share. Every problem is a 400 naming the field. */
final class Requests {
    private Requests() {}

    static String optText(JsonNode body, String field) {
        JsonNode v = body.get(field);
        if (v == null || v.isNull()) return null;
        if (!v.isTextual()) throw ApiError.badRequest(field, "'" + field + "' must be a string");
        return v.asText();
    }

    /** {@code n}, where given, must be 1: one choice per request. */
    static void requireOneChoice(JsonNode body) {
        JsonNode n = body.get("n");
        if (n != null && !n.isNull() && !(n.isIntegralNumber() && n.asInt() == 1))
            throw ApiError.badRequest("n", "only n = 1 is supported");
    }

    static boolean optBool(JsonNode body, String field, boolean dflt) {
        JsonNode v = body.get(field);
        if (v == null || v.isNull()) return dflt;
        if (!v.isBoolean()) throw ApiError.badRequest(field, "'" + field + "' must be a boolean");
        return v.asBoolean();
    }

    static Double optNumber(JsonNode body, String field, double min, double max) {
        JsonNode v = body.get(field);
        if (v == null || v.isNull()) return null;
        if (!v.isNumber()) throw ApiError.badRequest(field, "'" + field + "' must be a number");
        double d = v.asDouble();
        if (!(d >= min && d <= max))
            throw ApiError.badRequest(field, "'" + field + "' must be between " + min + " and " + max + ", got " + v);
        return d;
    }

    static Long optInteger(JsonNode body, String field, long min) {
        JsonNode v = body.get(field);
        if (v == null || v.isNull()) return null;
        if (!v.isIntegralNumber() || !v.canConvertToLong())
            throw ApiError.badRequest(field, "'" + field + "' must be an integer");
        long n = v.asLong();
        if (n < min) throw ApiError.badRequest(field, "'" + field + "' must be at least " + min + ", got " + n);
        return n;
    }

    /**
     * The sampling from temperature (default 1), top_p (default 1) and seed (default random), with logit_bias and the
     * presence and frequency penalties ({@link SamplingFields}).
     */
    static Sampling sampling(JsonNode body) {
        Double t = optNumber(body, "temperature", 0, 2);
        Double p = optNumber(body, "top_p", 0, 1);
        Long seed = optIntegerAnySign(body, "seed");
        float temperature = t == null ? 1f : t.floatValue();
        float topP = p == null ? 1f : p.floatValue();
        if (topP <= 0) topP = Float.MIN_VALUE; // top_p 0: only the most likely token survives
        long s = seed != null ? seed : ThreadLocalRandom.current().nextLong();
        return SamplingFields.adjusted(body, new Sampling(temperature, 0, topP, 0, s));
    }

    private static Long optIntegerAnySign(JsonNode body, String field) {
        JsonNode v = body.get(field);
        if (v == null || v.isNull()) return null;
        if (!v.isIntegralNumber() || !v.canConvertToLong())
            throw ApiError.badRequest(field, "'" + field + "' must be an integer");
        return v.asLong();
    }

    /** {@code stop}: a string or up to 4 strings, none of them empty (an empty one would stop before any text; OpenAI refuses it). */
    static List<String> stops(JsonNode body) {
        JsonNode v = body.get("stop");
        List<String> out = new ArrayList<>();
        if (v == null || v.isNull()) return out;
        if (v.isTextual()) {
            out.add(nonEmptyStop(v.asText()));
            return out;
        }
        if (!v.isArray()) throw ApiError.badRequest("stop", "'stop' must be a string or an array of strings");
        if (v.size() > 4) throw ApiError.badRequest("stop", "'stop' holds at most 4 sequences, got " + v.size());
        for (JsonNode s : v) {
            if (!s.isTextual()) throw ApiError.badRequest("stop", "'stop' must hold strings");
            out.add(nonEmptyStop(s.asText()));
        }
        return out;
    }

    private static String nonEmptyStop(String s) {
        if (s.isEmpty()) throw ApiError.badRequest("stop", "a 'stop' sequence must not be empty");
        return s;
    }

    /** {@code stream_options}: an object, and only with {@code stream: true} (OpenAI answers 400 otherwise). */
    static boolean includeUsage(JsonNode body, boolean stream) {
        JsonNode o = body.get("stream_options");
        if (o == null || o.isNull()) return false;
        if (!stream)
            throw ApiError.badRequest("stream_options", "'stream_options' is only allowed when 'stream' is true");
        if (!o.isObject()) throw ApiError.badRequest("stream_options", "'stream_options' must be an object");
        return optBool(o, "include_usage", false);
    }

    /** low / medium / high; OpenAI's "minimal" counts as low. Null when absent. */
    static ReasoningEffort effort(String value, String param) {
        if (value == null) return null;
        if (value.equalsIgnoreCase("minimal")) return ReasoningEffort.LOW;
        try {
            return ReasoningEffort.parse(value);
        } catch (IllegalArgumentException e) {
            throw ApiError.badRequest(param, "'" + param + "' must be low, medium or high, got '" + value + "'");
        }
    }

    /** Message content: a string, or an array of text parts (type text / input_text / output_text). */
    static String contentText(JsonNode content, String param) {
        if (content == null || content.isNull()) return "";
        if (content.isTextual()) return content.asText();
        if (!content.isArray())
            throw ApiError.badRequest(param, "'" + param + "' must be a string or an array of content parts");
        StringBuilder sb = new StringBuilder();
        for (JsonNode part : content) {
            String type = part.path("type").asText("");
            if (!(type.equals("text") || type.equals("input_text") || type.equals("output_text")))
                throw ApiError.badRequest(param, "content part type '" + type + "' is not supported (text only)");
            JsonNode t = part.get("text");
            if (t == null || !t.isTextual()) throw ApiError.badRequest(param, "a text content part needs 'text'");
            sb.append(t.asText());
        }
        return sb.toString();
    }

    /**
     * Tokens a reply may have after a prompt of {@code promptTokens}: {@code asked} when the client set it (a 400
     * naming both numbers when prompt and reply do not fit the context, as OpenAI answers), else {@code dflt} or what
     * room is left, whichever is less. {@code promptParam} names the field the prompt came from.
     */
    static int replyLimit(
            ServerOptions options, int promptTokens, Long asked, String askedParam, int dflt, String promptParam) {
        int ctxLen = options.contextLength();
        if (promptTokens >= ctxLen)
            throw ApiError.badRequest(
                    promptParam,
                    "context_length_exceeded",
                    "This model's maximum context length is " + ctxLen + " tokens. However, your prompt is "
                            + promptTokens + " tokens. Please reduce the length of the " + promptParam + ".");
        if (asked != null && promptTokens + asked > ctxLen)
            throw ApiError.badRequest(
                    askedParam,
                    "context_length_exceeded",
                    "This model's maximum context length is " + ctxLen
                            + " tokens. However, you requested " + (promptTokens + asked) + " tokens (" + promptTokens
                            + " in the "
                            + promptParam + ", " + asked + " in the completion). Please reduce the length of the "
                            + promptParam
                            + " or of '" + askedParam + "'.");
        return (int) Math.min(asked != null ? asked : dflt, ctxLen - promptTokens);
    }

    static String id(String prefix) {
        return prefix
                + Long.toHexString(ThreadLocalRandom.current().nextLong())
                + Long.toHexString(System.nanoTime() & 0xffffff);
    }
}
