package io.gossgpu.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.gossgpu.api.TokenLogprob;
import io.gossgpu.api.Tokens;
import java.nio.charset.StandardCharsets;
import java.util.List;

/** Log probabilities in the two shapes OpenAI answers them: chat's {@code logprobs.content} and the legacy completions'. */
final class Logprobs {
    private Logprobs() {}

    /** Chat's {@code logprobs} + {@code top_logprobs}: -1 when not asked for, else the number of alternatives (0–20). */
    static int chatRequest(JsonNode body) {
        boolean on = Requests.optBool(body, "logprobs", false);
        Long top = Requests.optInteger(body, "top_logprobs", 0);
        if (top != null && top > TokenLogprob.MAX_TOP)
            throw ApiError.badRequest(
                    "top_logprobs", "'top_logprobs' must be at most " + TokenLogprob.MAX_TOP + ", got " + top);
        if (top != null && !on) throw ApiError.badRequest("top_logprobs", "'top_logprobs' needs 'logprobs': true");
        return on ? (top == null ? 0 : top.intValue()) : -1;
    }

    /** The completions API's {@code logprobs} (an integer, the number of alternatives): -1 when absent. */
    static int completionsRequest(JsonNode body) {
        Long n = Requests.optInteger(body, "logprobs", 0);
        if (n != null && n > TokenLogprob.MAX_TOP)
            throw ApiError.badRequest("logprobs", "'logprobs' must be at most " + TokenLogprob.MAX_TOP + ", got " + n);
        return n == null ? -1 : n.intValue();
    }

    /** {@code {"content":[{token, logprob, bytes, top_logprobs:[...]}], "refusal":null}} */
    static ObjectNode chat(List<TokenLogprob> tokens) {
        ObjectNode o = Json.object();
        ArrayNode content = o.putArray("content");
        for (TokenLogprob t : tokens) {
            ObjectNode e = entry(t.token(), t.logprob());
            ArrayNode top = e.putArray("top_logprobs");
            for (int i = 0; i < t.topTokens().length; i++) top.add(entry(t.topTokens()[i], t.topLogprobs()[i]));
            content.add(e);
        }
        o.putNull("refusal");
        return o;
    }

    /** {@code {"tokens", "token_logprobs", "top_logprobs", "text_offset"}}; offsets count from {@code offset}. */
    static ObjectNode completions(List<TokenLogprob> tokens, int offset) {
        ObjectNode o = Json.object();
        ArrayNode text = o.putArray("tokens"),
                lps = o.putArray("token_logprobs"),
                top = o.putArray("top_logprobs"),
                offsets = o.putArray("text_offset");
        for (TokenLogprob t : tokens) {
            String s = text(t.token());
            text.add(s);
            lps.add(t.logprob());
            ObjectNode alternatives = top.addObject();
            for (int i = 0; i < t.topTokens().length; i++) alternatives.put(text(t.topTokens()[i]), t.topLogprobs()[i]);
            offsets.add(offset);
            offset += s.length();
        }
        return o;
    }

    private static ObjectNode entry(int token, float logprob) {
        ObjectNode e = Json.object();
        e.put("token", text(token));
        e.put("logprob", logprob);
        ArrayNode bytes = e.putArray("bytes");
        for (byte b : Tokens.tokenBytes(token)) bytes.add(b & 0xff);
        return e;
    }

    /** A token's text (a token that ends mid-character shows the replacement character; {@code bytes} has the truth). */
    private static String text(int token) {
        return new String(Tokens.tokenBytes(token), StandardCharsets.UTF_8);
    }
}
