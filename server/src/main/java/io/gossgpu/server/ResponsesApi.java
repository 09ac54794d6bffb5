package io.gossgpu.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.gossgpu.ReasoningEffort;
import io.gossgpu.api.ResponseFormat;
import io.gossgpu.api.TokenLogprob;
import io.gossgpu.api.Tool;
import io.javalin.http.Context;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code POST /v1/responses}, the subset chat clients use: {@code input} as a string or items (messages,
 * function_call, function_call_output, reasoning), {@code instructions}, {@code reasoning.effort}, function
 * {@code tools} and {@code tool_choice}, {@code max_output_tokens}, temperature/top_p, {@code stream} with the
 * Responses events, and {@code previous_response_id} for responses kept in memory (a bounded number, oldest
 * dropped first; {@code store: false} keeps none), which {@code GET /v1/responses/{id}} returns and
 * {@code DELETE /v1/responses/{id}} forgets.
 */
final class ResponsesApi {
    private final GossServer server;
    private final int bound;
    /** A stored response and its conversation's items (inputs and outputs so far). */
    private record Stored(ObjectNode response, List<JsonNode> items) {}

    /** Response id → what is kept of it, least recently used first. */
    private final Map<String, Stored> stored;

    ResponsesApi(GossServer server, int bound) {
        this.server = server;
        this.bound = bound;
        this.stored = new LinkedHashMap<>(16, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, Stored> eldest) {
                return size() > ResponsesApi.this.bound;
            }
        };
    }

    int storedCount() {
        synchronized (stored) {
            return stored.size();
        }
    }

    void handle(Context ctx, JsonNode body) throws Exception {
        SlotPool pool = server.requireReady();
        server.checkModel(body);
        boolean stream = Requests.optBool(body, "stream", false);
        boolean store = Requests.optBool(body, "store", true);
        String previous = Requests.optText(body, "previous_response_id");

        List<JsonNode> items = new ArrayList<>();
        if (previous != null) {
            Stored prior;
            synchronized (stored) {
                prior = stored.get(previous);
            }
            if (prior == null)
                throw new ApiError(
                        404,
                        "invalid_request_error",
                        "previous_response_not_found",
                        "previous_response_id",
                        "Previous response with id '" + previous + "' not found (this server keeps the last " + bound
                                + ").",
                        null);
            items.addAll(prior.items());
        }
        JsonNode input = body.get("input");
        if (input == null || input.isNull()) throw ApiError.badRequest("input", "'input' is required");
        if (input.isTextual()) {
            ObjectNode m = Json.object();
            m.put("type", "message");
            m.put("role", "user");
            m.put("content", input.asText());
            items.add(m);
        } else if (input.isArray()) {
            for (JsonNode it : input) items.add(it);
        } else throw ApiError.badRequest("input", "'input' must be a string or an array of items");

        Conversation conv = new Conversation();
        String instructions = Requests.optText(body, "instructions");
        conv.instruction(instructions);
        readItems(items, conv);
        ToolChoiceField tools = ToolChoiceField.of(body.get("tool_choice"), tools(body.get("tools")));
        tools.tools().forEach(conv::tool);
        JsonNode reasoning = body.get("reasoning");
        ReasoningEffort effort = reasoning != null && reasoning.isObject()
                ? Requests.effort(Requests.optText(reasoning, "effort"), "reasoning.effort")
                : null;
        Long max = Requests.optInteger(body, "max_output_tokens", 1);
        ResponseFormat format =
                StructuredOutput.responsesFormat(body.path("text").get("format"));
        if (body.hasNonNull("top_logprobs"))
            throw ApiError.badRequest(
                    "top_logprobs",
                    "'top_logprobs' is not supported on /v1/responses; /v1/chat/completions has 'logprobs'");
        ChatCompletionsApi.Prepared p = new ChatCompletionsApi(server)
                .prepare(
                        conv.build(), effort, format, max, "max_output_tokens", Requests.sampling(body), List.of(), -1);
        Generation.Limits limits = p.limits().declaring(tools.tools(), tools.choice());

        String id = Requests.id("resp_");
        long created = System.currentTimeMillis() / 1000;
        ObjectNode skeleton = skeleton(id, created, body, instructions, effort, previous, store);
        SlotPool.Slot slot = pool.acquire(p.prompt());
        Generation.Outcome o;
        Builder b;
        Sse sse = stream ? new Sse(ctx.res()) : null;
        try {
            b = new Builder(sse);
            try {
                if (sse != null) {
                    ObjectNode r = skeleton.deepCopy();
                    r.put("status", "in_progress");
                    b.emit("response.created", "response", r);
                    b.emit("response.in_progress", "response", r);
                }
                o = Generation.chat(slot, p.conversation(), p.reply(), p.prompt().length, limits, b);
                server.note(ctx, slot, o);
                if (o.clientGone()) return;
                if (o.aborted()) {
                    if (sse == null) throw ApiError.cutByShutdown();
                    b.error(server.streamFailure(ctx, ApiError.cutByShutdown()));
                    return;
                }
                if (b.output.isEmpty()) b.content("", List.of()); // the model said nothing usable: an empty message
                b.close(o.finishReason().equals("length") ? "incomplete" : "completed");
            } catch (IOException gone) {
                server.clientGone(ctx);
                return;
            } catch (RuntimeException failed) {
                if (sse == null) throw failed;
                try {
                    b.error(server.streamFailure(ctx, failed));
                } catch (IOException gone) {
                    server.clientGone(ctx);
                }
                return;
            }
        } finally {
            pool.release(slot);
        }
        ObjectNode r = skeleton;
        boolean incomplete = o.finishReason().equals("length");
        r.put("status", incomplete ? "incomplete" : "completed");
        if (incomplete) r.putObject("incomplete_details").put("reason", "max_output_tokens");
        r.set("output", b.output);
        StringBuilder text = new StringBuilder();
        for (JsonNode it : b.output)
            if (it.path("type").asText().equals("message"))
                for (JsonNode c : it.path("content")) text.append(c.path("text").asText());
        r.put("output_text", text.toString());
        ObjectNode u = r.putObject("usage");
        u.put("input_tokens", o.promptTokens());
        u.putObject("input_tokens_details").put("cached_tokens", o.cachedTokens());
        u.put("output_tokens", o.completionTokens());
        u.putObject("output_tokens_details").put("reasoning_tokens", o.reasoningTokens());
        u.put("total_tokens", o.promptTokens() + o.completionTokens());
        if (store && bound > 0) {
            List<JsonNode> all = new ArrayList<>(items);
            b.output.forEach(all::add);
            synchronized (stored) {
                stored.put(id, new Stored(r.deepCopy(), List.copyOf(all)));
            }
        }
        if (stream) {
            try {
                b.emit(incomplete ? "response.incomplete" : "response.completed", "response", r);
            } catch (IOException gone) {
                server.clientGone(ctx);
            }
        } else {
            GossServer.json(ctx, 200, r);
        }
    }

    /** {@code GET /v1/responses/{id}}: a stored response as it was returned. */
    void retrieve(Context ctx, String id) {
        GossServer.json(ctx, 200, find(id).response());
    }

    /** {@code DELETE /v1/responses/{id}}: forgets a stored response (its id can no longer be a previous_response_id). */
    void delete(Context ctx, String id) {
        find(id);
        synchronized (stored) {
            stored.remove(id);
        }
        ObjectNode o = Json.object();
        o.put("id", id);
        o.put("object", "response");
        o.put("deleted", true);
        GossServer.json(ctx, 200, o);
    }

    private Stored find(String id) {
        Stored s;
        synchronized (stored) {
            s = stored.get(id);
        }
        if (s == null)
            throw new ApiError(
                    404,
                    "invalid_request_error",
                    "not_found",
                    null,
                    "Response with id '" + id + "' not found (this server keeps the last " + bound
                            + " stored responses).",
                    null);
        return s;
    }

    private ObjectNode skeleton(
            String id,
            long created,
            JsonNode body,
            String instructions,
            ReasoningEffort effort,
            String previous,
            boolean store) {
        ObjectNode r = Json.object();
        r.put("id", id);
        r.put("object", "response");
        r.put("created_at", created);
        r.put("status", "in_progress");
        r.putNull("error");
        r.putNull("incomplete_details");
        if (instructions == null) r.putNull("instructions");
        else r.put("instructions", instructions);
        if (body.has("max_output_tokens")) r.set("max_output_tokens", body.get("max_output_tokens"));
        else r.putNull("max_output_tokens");
        r.put("model", server.options.modelId());
        r.putArray("output");
        r.put("parallel_tool_calls", true);
        if (previous == null) r.putNull("previous_response_id");
        else r.put("previous_response_id", previous);
        ObjectNode reasoning = r.putObject("reasoning");
        reasoning.put("effort", (effort != null ? effort : ReasoningEffort.MEDIUM).wire());
        reasoning.putNull("summary");
        r.put("store", store);
        r.put(
                "temperature",
                body.path("temperature").isNumber() ? body.get("temperature").asDouble() : 1.0);
        r.put("top_p", body.path("top_p").isNumber() ? body.get("top_p").asDouble() : 1.0);
        r.putObject("text").putObject("format").put("type", "text");
        JsonNode choice = body.get("tool_choice");
        if (choice == null || choice.isNull()) r.put("tool_choice", "auto");
        else r.set("tool_choice", choice);
        r.set("tools", body.has("tools") && body.get("tools").isArray() ? body.get("tools") : Json.array());
        r.put("truncation", "disabled");
        r.set("metadata", body.path("metadata").isObject() ? body.get("metadata") : Json.object());
        r.putNull("usage");
        return r;
    }

    private static List<Tool> tools(JsonNode tools) {
        List<Tool> out = new ArrayList<>();
        if (tools == null || tools.isNull()) return out;
        if (!tools.isArray()) throw ApiError.badRequest("tools", "'tools' must be an array");
        for (JsonNode t : tools) {
            String type = t.path("type").asText("");
            if (!type.equals("function"))
                throw ApiError.badRequest("tools", "tool type '" + type + "' is not supported (function only)");
            try {
                out.add(Conversation.functionTool(t));
            } catch (IllegalArgumentException e) {
                throw ApiError.badRequest("tools", e.getMessage());
            }
        }
        return out;
    }

    private static void readItems(List<JsonNode> items, Conversation conv) {
        for (int i = 0; i < items.size(); i++) {
            JsonNode it = items.get(i);
            String param = "input[" + i + "]";
            if (!it.isObject()) throw ApiError.badRequest(param, param + " must be an object");
            String type = it.path("type").asText(it.has("role") ? "message" : "");
            switch (type) {
                case "message" -> {
                    String role = it.path("role").asText("");
                    String text = Requests.contentText(it.get("content"), param + ".content");
                    switch (role) {
                        case "user" -> conv.user(text);
                        case "system", "developer" -> conv.instruction(text);
                        case "assistant" -> conv.assistantFinal(text);
                        default -> throw ApiError.badRequest(param + ".role", "unknown role '" + role + "'");
                    }
                }
                case "function_call" -> {
                    if (!it.path("name").isTextual())
                        throw ApiError.badRequest(param + ".name", "a function_call item needs 'name'");
                    conv.toolCall(
                            it.path("call_id").asText(null),
                            it.get("name").asText(),
                            it.path("arguments").asText("{}"));
                }
                case "function_call_output" -> {
                    JsonNode out = it.get("output");
                    String text = out == null || out.isNull()
                            ? ""
                            : out.isTextual() ? out.asText() : Requests.contentText(out, param + ".output");
                    conv.toolResult(it.path("call_id").asText(null), null, text, param);
                }
                case "reasoning" -> {
                    StringBuilder sb = new StringBuilder();
                    for (JsonNode c : it.path("content"))
                        sb.append(c.path("text").asText(""));
                    if (sb.isEmpty())
                        for (JsonNode c : it.path("summary"))
                            sb.append(c.path("text").asText(""));
                    conv.reasoning(sb.toString());
                }
                default ->
                    throw ApiError.badRequest(param + ".type", "input item type '" + type + "' is not supported");
            }
        }
        if (!conv.hasTurns()) throw ApiError.badRequest("input", "'input' has no message");
    }

    /** Builds the output items as the reply streams, and (when streaming) sends the Responses events. */
    private static final class Builder implements Generation.Sink {
        final Sse sse;
        final ArrayNode output = Json.array();
        int seq;
        ObjectNode item; // the open item, or null
        String kind; // reasoning / message / function_call
        final StringBuilder text = new StringBuilder();

        Builder(Sse sse) {
            this.sse = sse;
        }

        void emit(String type, String field, ObjectNode value) throws IOException {
            if (sse == null) return;
            ObjectNode e = Json.object();
            e.put("type", type);
            e.put("sequence_number", seq++);
            if (field != null) e.set(field, value);
            sse.event(type, e);
        }

        private ObjectNode event(String type) {
            ObjectNode e = Json.object();
            e.put("type", type);
            e.put("sequence_number", seq++);
            e.put("output_index", output.size() - 1);
            if (item != null) e.put("item_id", item.get("id").asText());
            return e;
        }

        private void send(ObjectNode e) throws IOException {
            if (sse != null) sse.event(e.get("type").asText(), e);
        }

        private void open(String k, ObjectNode it) throws IOException {
            close("completed"); // a new item means the previous one was finished
            item = it;
            kind = k;
            text.setLength(0);
            output.add(it);
            if (sse == null) return;
            ObjectNode added = event("response.output_item.added");
            added.set("item", it.deepCopy());
            send(added);
            if (k.equals("message")) {
                ObjectNode part = event("response.content_part.added");
                part.put("content_index", 0);
                part.set("part", textPart("output_text", ""));
                send(part);
            }
        }

        private static ObjectNode textPart(String type, String text) {
            ObjectNode p = Json.object();
            p.put("type", type);
            p.put("text", text);
            if (type.equals("output_text")) {
                p.putArray("annotations");
                p.putArray("logprobs");
            }
            return p;
        }

        /** An {@code error} event (the stream then ends without a final response event). */
        void error(ApiError e) throws IOException {
            if (sse == null) return;
            ObjectNode ev = Json.object();
            ev.put("type", "error");
            ev.put("sequence_number", seq++);
            ev.put("code", e.code);
            ev.put("message", e.getMessage());
            ev.putNull("param");
            sse.event("error", ev);
        }

        /** Closes the open item: {@code status} completed, or incomplete when the reply ran out of tokens in it. */
        void close(String status) throws IOException {
            if (item == null) return;
            String t = text.toString();
            switch (kind) {
                case "reasoning" -> {
                    item.putArray("content").add(textPart("reasoning_text", t));
                    if (sse != null) {
                        ObjectNode d = event("response.reasoning_text.done");
                        d.put("content_index", 0);
                        d.put("text", t);
                        send(d);
                    }
                }
                case "message" -> {
                    item.putArray("content").add(textPart("output_text", t));
                    item.put("status", status);
                    if (sse != null) {
                        ObjectNode d = event("response.output_text.done");
                        d.put("content_index", 0);
                        d.put("text", t);
                        d.putArray("logprobs");
                        send(d);
                        ObjectNode pd = event("response.content_part.done");
                        pd.put("content_index", 0);
                        pd.set("part", textPart("output_text", t));
                        send(pd);
                    }
                }
                case "function_call" -> {
                    item.put("arguments", t);
                    item.put("status", status);
                    if (sse != null) {
                        ObjectNode d = event("response.function_call_arguments.done");
                        d.put("arguments", t);
                        d.put("name", item.get("name").asText());
                        send(d);
                    }
                }
                default -> throw new IllegalStateException(kind);
            }
            if (sse != null) {
                ObjectNode done = event("response.output_item.done");
                done.set("item", item.deepCopy());
                send(done);
            }
            item = null;
            kind = null;
        }

        @Override
        public void tick() throws IOException {
            if (sse != null) sse.ping();
        }

        @Override
        public void reasoning(String delta) throws IOException {
            if (!"reasoning".equals(kind)) {
                ObjectNode it = Json.object();
                it.put("type", "reasoning");
                it.put("id", Requests.id("rs_"));
                it.putArray("summary");
                open("reasoning", it);
            }
            text.append(delta);
            if (sse != null) {
                ObjectNode d = event("response.reasoning_text.delta");
                d.put("content_index", 0);
                d.put("delta", delta);
                send(d);
            }
        }

        @Override
        public void content(String delta, List<TokenLogprob> logprobs) throws IOException {
            if (!"message".equals(kind)) {
                ObjectNode it = Json.object();
                it.put("type", "message");
                it.put("id", Requests.id("msg_"));
                it.put("status", "in_progress");
                it.put("role", "assistant");
                it.putArray("content");
                open("message", it);
            }
            text.append(delta);
            if (sse != null) {
                ObjectNode d = event("response.output_text.delta");
                d.put("content_index", 0);
                d.put("delta", delta);
                d.putArray("logprobs");
                send(d);
            }
        }

        @Override
        public void toolStart(Generation.ToolCallOut call) throws IOException {
            ObjectNode it = Json.object();
            it.put("type", "function_call");
            it.put("id", Requests.id("fc_"));
            it.put("call_id", call.id);
            it.put("name", call.name);
            it.put("arguments", "");
            it.put("status", "in_progress");
            open("function_call", it);
        }

        @Override
        public void toolDelta(Generation.ToolCallOut call, String delta) throws IOException {
            text.append(delta);
            if (sse != null) {
                ObjectNode d = event("response.function_call_arguments.delta");
                d.put("delta", delta);
                send(d);
            }
        }
    }
}
