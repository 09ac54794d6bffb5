package io.gossgpu.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.gossgpu.ReasoningEffort;
import io.gossgpu.api.ChatOptions;
import io.gossgpu.api.ResponseFormat;
import io.gossgpu.api.Sampling;
import io.gossgpu.api.TokenLogprob;
import io.javalin.http.Context;
import java.io.IOException;
import java.util.List;

/** {@code POST /v1/chat/completions}: non-streaming and SSE streaming, tools, reasoning as {@code reasoning_content}. */
final class ChatCompletionsApi {
    private final GossServer server;

    ChatCompletionsApi(GossServer server) {
        this.server = server;
    }

    /**
     * A request made ready to run: the conversation, the reply's reasoning effort and date ({@code reply}), the prompt
     * they render to, and the limits.
     */
    record Prepared(
            io.gossgpu.api.Conversation conversation, ChatOptions reply, int[] prompt, Generation.Limits limits) {}

    void handle(Context ctx, JsonNode body) throws Exception {
        SlotPool pool = server.requireReady();
        server.checkModel(body);
        Requests.requireOneChoice(body);
        boolean stream = Requests.optBool(body, "stream", false);
        boolean includeUsage = Requests.includeUsage(body, stream);

        Conversation conv = new Conversation();
        readMessages(body.get("messages"), conv);
        ToolChoiceField tools = ToolChoiceField.of(body.get("tool_choice"), Conversation.chatTools(body.get("tools")));
        tools.tools().forEach(conv::tool);
        ReasoningEffort effort = Requests.effort(Requests.optText(body, "reasoning_effort"), "reasoning_effort");
        ResponseFormat format =
                StructuredOutput.withGrammar(body, StructuredOutput.chatFormat(body.get("response_format")));
        String maxField = body.hasNonNull("max_completion_tokens") ? "max_completion_tokens" : "max_tokens";
        Long max = Requests.optInteger(body, maxField, 1);
        int topLogprobs = Logprobs.chatRequest(body);
        Prepared p = prepare(
                conv.build(),
                effort,
                format,
                max,
                maxField,
                Requests.sampling(body),
                Requests.stops(body),
                topLogprobs);
        Generation.Limits limits = p.limits().declaring(tools.tools(), tools.choice());

        String id = Requests.id("chatcmpl-");
        long created = System.currentTimeMillis() / 1000;
        SlotPool.Slot slot = pool.acquire(p.prompt());
        try {
            if (!stream) {
                Generation.Outcome o = server.finished(
                        ctx,
                        slot,
                        Generation.chat(
                                slot,
                                p.conversation(),
                                p.reply(),
                                p.prompt().length,
                                limits,
                                new Generation.Sink() {}));
                GossServer.json(ctx, 200, completion(id, created, o, topLogprobs >= 0));
                return;
            }
            Sse sse = new Sse(ctx.res());
            StreamSink sink = new StreamSink(sse, id, created, topLogprobs >= 0);
            server.stream(
                    ctx,
                    slot,
                    sse,
                    () -> {
                        sink.first();
                        return Generation.chat(slot, p.conversation(), p.reply(), p.prompt().length, limits, sink);
                    },
                    o -> {
                        ObjectNode last = sink.chunk();
                        ObjectNode choice = (ObjectNode) last.get("choices").get(0);
                        choice.putObject("delta");
                        choice.put("finish_reason", o.finishReason());
                        sse.data(last);
                        if (includeUsage) {
                            ObjectNode u = sink.chunk();
                            u.putArray("choices");
                            u.set("usage", usage(o));
                            sse.data(u);
                        }
                    });
        } finally {
            pool.release(slot);
        }
    }

    /**
     * Renders the conversation as the chat will (today's date, {@code effort} or medium, {@code format}'s schema shown)
     * and checks it against the context: a prompt that does not fit, or one that does but not with the
     * {@code maxTokens} the client asked for ({@code maxField}), is a 400 naming both numbers; with no limit asked for,
     * the reply gets what room is left up to the server's default.
     */
    Prepared prepare(
            io.gossgpu.api.Conversation conversation,
            ReasoningEffort effort,
            ResponseFormat format,
            Long maxTokens,
            String maxField,
            Sampling sampling,
            List<String> stops,
            int topLogprobs) {
        ChatOptions reply = ChatOptions.defaults()
                .withReasoningEffort(effort != null ? effort : ReasoningEffort.MEDIUM)
                .withResponseFormat(format);
        int[] prompt = conversation.promptTokens(reply);
        int max = Requests.replyLimit(
                server.options, prompt.length, maxTokens, maxField, server.options.defaultMaxTokens(), "messages");
        return new Prepared(
                conversation,
                reply,
                prompt,
                new Generation.Limits(max, sampling, stops, topLogprobs).structured(format));
    }

    /** The chat-completions {@code messages} array into {@code conv}. */
    static void readMessages(JsonNode messages, Conversation conv) {
        if (messages == null || messages.isNull()) throw ApiError.badRequest("messages", "'messages' is required");
        if (!messages.isArray() || messages.isEmpty())
            throw ApiError.badRequest("messages", "'messages' must be a non-empty array");
        for (int i = 0; i < messages.size(); i++) {
            JsonNode m = messages.get(i);
            String param = "messages[" + i + "]";
            if (!m.isObject()) throw ApiError.badRequest(param, param + " must be an object");
            String role = m.path("role").asText(null);
            if (role == null) throw ApiError.badRequest(param + ".role", param + " has no 'role'");
            JsonNode content = m.get("content");
            switch (role) {
                case "system", "developer" -> conv.instruction(Requests.contentText(content, param + ".content"));
                case "user" -> {
                    if (content == null || content.isNull())
                        throw ApiError.badRequest(param + ".content", param + " (role user) has no 'content'");
                    conv.user(Requests.contentText(content, param + ".content"));
                }
                case "assistant" -> {
                    String reasoning = m.path("reasoning_content")
                            .asText(m.path("reasoning").asText(""));
                    conv.reasoning(reasoning);
                    String text = Requests.contentText(content, param + ".content");
                    JsonNode calls = m.get("tool_calls");
                    boolean hasCalls = calls != null && calls.isArray() && !calls.isEmpty();
                    if (!text.isEmpty()) {
                        if (hasCalls) conv.assistantCommentary(text);
                        else conv.assistantFinal(text);
                    }
                    if (hasCalls) {
                        for (JsonNode c : calls) {
                            JsonNode f = c.get("function");
                            if (f == null || !f.path("name").isTextual())
                                throw ApiError.badRequest(
                                        param + ".tool_calls", "a tool call needs 'function' with 'name'");
                            conv.toolCall(
                                    c.path("id").asText(null),
                                    f.get("name").asText(),
                                    f.path("arguments").asText("{}"));
                        }
                    }
                }
                case "tool", "function" ->
                    conv.toolResult(
                            m.path("tool_call_id").asText(null),
                            m.path("name").asText(null),
                            Requests.contentText(content, param + ".content"),
                            param);
                default -> throw ApiError.badRequest(param + ".role", "unknown role '" + role + "'");
            }
        }
        if (!conv.hasTurns()) throw ApiError.badRequest("messages", "'messages' has no user message");
    }

    private ObjectNode completion(String id, long created, Generation.Outcome o, boolean logprobs) {
        ObjectNode r = Json.object();
        ObjectNode c = Json.completionChoice(r, id, "chat.completion", created, server.options.modelId());
        ObjectNode msg = c.putObject("message");
        msg.put("role", "assistant");
        if (o.content().isEmpty() && !o.toolCalls().isEmpty()) msg.putNull("content");
        else msg.put("content", o.content());
        msg.putNull("refusal");
        if (!o.reasoning().isEmpty()) msg.put("reasoning_content", o.reasoning());
        if (!o.toolCalls().isEmpty()) {
            ArrayNode calls = msg.putArray("tool_calls");
            for (Generation.ToolCallOut t : o.toolCalls()) {
                ObjectNode call = calls.addObject();
                call.put("id", t.id);
                call.put("type", "function");
                ObjectNode f = call.putObject("function");
                f.put("name", t.name);
                f.put("arguments", t.arguments.toString());
            }
        }
        if (logprobs) c.set("logprobs", Logprobs.chat(o.logprobs()));
        else c.putNull("logprobs");
        c.put("finish_reason", o.finishReason());
        r.set("usage", usage(o));
        return r;
    }

    static ObjectNode usage(Generation.Outcome o) {
        ObjectNode u = Json.object();
        u.put("prompt_tokens", o.promptTokens());
        u.put("completion_tokens", o.completionTokens());
        u.put("total_tokens", o.promptTokens() + o.completionTokens());
        u.putObject("prompt_tokens_details").put("cached_tokens", o.cachedTokens());
        u.putObject("completion_tokens_details").put("reasoning_tokens", o.reasoningTokens());
        return u;
    }

    /** Chunks of {@code chat.completion.chunk} as the reply is generated. */
    private final class StreamSink implements Generation.Sink {
        final Sse sse;
        final String id;
        final long created;
        final boolean logprobs;

        StreamSink(Sse sse, String id, long created, boolean logprobs) {
            this.sse = sse;
            this.id = id;
            this.created = created;
            this.logprobs = logprobs;
        }

        ObjectNode chunk() {
            ObjectNode r = Json.object();
            ObjectNode c = Json.completionChoice(r, id, "chat.completion.chunk", created, server.options.modelId());
            c.putNull("logprobs");
            c.putNull("finish_reason");
            return r;
        }

        private ObjectNode delta(ObjectNode chunk) {
            return ((ObjectNode) chunk.get("choices").get(0)).putObject("delta");
        }

        void first() throws IOException {
            ObjectNode ch = chunk();
            ObjectNode d = delta(ch);
            d.put("role", "assistant");
            d.put("content", "");
            sse.data(ch);
        }

        @Override
        public void tick() throws IOException {
            sse.ping();
        }

        @Override
        public void reasoning(String text) throws IOException {
            ObjectNode ch = chunk();
            delta(ch).put("reasoning_content", text);
            sse.data(ch);
        }

        @Override
        public void content(String text, List<TokenLogprob> lps) throws IOException {
            ObjectNode ch = chunk();
            delta(ch).put("content", text);
            if (logprobs) ((ObjectNode) ch.get("choices").get(0)).set("logprobs", Logprobs.chat(lps));
            sse.data(ch);
        }

        @Override
        public void toolStart(Generation.ToolCallOut call) throws IOException {
            ObjectNode ch = chunk();
            ObjectNode t = delta(ch).putArray("tool_calls").addObject();
            t.put("index", call.index);
            t.put("id", call.id);
            t.put("type", "function");
            ObjectNode f = t.putObject("function");
            f.put("name", call.name);
            f.put("arguments", "");
            sse.data(ch);
        }

        @Override
        public void toolDelta(Generation.ToolCallOut call, String text) throws IOException {
            ObjectNode ch = chunk();
            ObjectNode t = delta(ch).putArray("tool_calls").addObject();
            t.put("index", call.index);
            t.putObject("function").put("arguments", text);
            sse.data(ch);
        }
    }
}
