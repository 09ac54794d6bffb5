package io.gossgpu.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.gossgpu.api.Sampling;
import io.gossgpu.api.TokenLogprob;
import io.gossgpu.api.Tokens;
import io.javalin.http.Context;
import java.io.IOException;
import java.util.List;

/** {@code POST /v1/completions}: raw text continuation (no Harmony), non-streaming and streaming. */
final class CompletionsApi {
    private final GossServer server;

    CompletionsApi(GossServer server) {
        this.server = server;
    }

    void handle(Context ctx, JsonNode body) throws Exception {
        SlotPool pool = server.requireReady();
        server.checkModel(body);
        Requests.requireOneChoice(body);
        if (Requests.optBool(body, "echo", false)) throw ApiError.badRequest("echo", "'echo' is not supported");
        if (Requests.optText(body, "suffix") != null) throw ApiError.badRequest("suffix", "'suffix' is not supported");
        String prompt = prompt(body.get("prompt"));
        boolean stream = Requests.optBool(body, "stream", false);
        boolean includeUsage = Requests.includeUsage(body, stream);
        Long max = Requests.optInteger(body, "max_tokens", 0);
        Sampling sampling = Requests.sampling(body);
        List<String> stops = Requests.stops(body);
        int topLogprobs = Logprobs.completionsRequest(body);
        boolean logprobs = topLogprobs >= 0;

        int promptTokens = Tokens.encode(prompt).length;
        if (promptTokens == 0) throw ApiError.badRequest("prompt", "'prompt' is empty");
        int maxTokens = Requests.replyLimit(
                server.options, promptTokens, max, "max_tokens", 16, "prompt"); // OpenAI's default is 16
        Generation.Limits limits = new Generation.Limits(maxTokens, sampling, stops, topLogprobs)
                .structured(StructuredOutput.withGrammar(body, null));
        String id = Requests.id("cmpl-");
        long created = System.currentTimeMillis() / 1000;

        if (maxTokens == 0) { // nothing to generate (and a session cannot run zero tokens)
            Generation.Outcome o = Generation.Outcome.empty(promptTokens);
            if (!stream)
                GossServer.json(
                        ctx,
                        200,
                        response(
                                id,
                                created,
                                "",
                                "length",
                                o,
                                logprobs ? Logprobs.completions(List.of(), prompt.length()) : null));
            else {
                Sse sse = new Sse(ctx.res());
                sse.data(response(id, created, "", "length", includeUsage ? o : null, null));
                sse.done();
            }
            return;
        }
        SlotPool.Slot slot = pool.acquire(null);
        try {
            if (!stream) {
                Generation.Outcome o = server.finished(
                        ctx, slot, Generation.complete(slot, prompt, promptTokens, limits, new Generation.Sink() {}));
                GossServer.json(
                        ctx,
                        200,
                        response(
                                id,
                                created,
                                o.content(),
                                o.finishReason(),
                                o,
                                logprobs ? Logprobs.completions(o.logprobs(), prompt.length()) : null));
                return;
            }
            Sse sse = new Sse(ctx.res());
            int[] offset = {prompt.length()};
            server.stream(
                    ctx,
                    slot,
                    sse,
                    () -> Generation.complete(slot, prompt, promptTokens, limits, new Generation.Sink() {
                        @Override
                        public void tick() throws IOException {
                            sse.ping();
                        }

                        @Override
                        public void content(String delta, List<TokenLogprob> lps) throws IOException {
                            sse.data(response(
                                    id,
                                    created,
                                    delta,
                                    null,
                                    null,
                                    logprobs ? Logprobs.completions(lps, offset[0]) : null));
                            offset[0] += delta.length();
                        }
                    }),
                    o -> {
                        sse.data(response(id, created, "", o.finishReason(), null, null));
                        if (includeUsage) {
                            ObjectNode u = response(id, created, "", null, o, null);
                            u.putArray("choices");
                            sse.data(u);
                        }
                    });
        } finally {
            pool.release(slot);
        }
    }

    private static String prompt(JsonNode p) {
        if (p == null || p.isNull()) throw ApiError.badRequest("prompt", "'prompt' is required");
        if (p.isTextual()) return p.asText();
        if (p.isArray() && p.size() == 1 && p.get(0).isTextual())
            return p.get(0).asText();
        if (p.isArray() && p.size() > 1)
            throw ApiError.badRequest("prompt", "only one prompt per request is supported");
        throw ApiError.badRequest("prompt", "'prompt' must be a string");
    }

    private ObjectNode response(
            String id, long created, String text, String finish, Generation.Outcome usage, ObjectNode logprobs) {
        ObjectNode r = Json.object();
        ObjectNode c = Json.completionChoice(r, id, "text_completion", created, server.options.modelId());
        c.put("text", text);
        if (logprobs != null) c.set("logprobs", logprobs);
        else c.putNull("logprobs");
        if (finish == null) c.putNull("finish_reason");
        else c.put("finish_reason", finish);
        if (usage != null) {
            ObjectNode u = r.putObject("usage");
            u.put("prompt_tokens", usage.promptTokens());
            u.put("completion_tokens", usage.completionTokens());
            u.put("total_tokens", usage.promptTokens() + usage.completionTokens());
        }
        return r;
    }
}
