package io.gossgpu.constrain;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.gossgpu.api.Chat;
import io.gossgpu.api.ChatOptions;
import io.gossgpu.api.Conversation;
import io.gossgpu.api.Engine;
import io.gossgpu.api.Reply;
import io.gossgpu.api.Sampling;
import io.gossgpu.api.StopReason;
import io.gossgpu.api.Tool;
import io.gossgpu.api.Turn;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The held-out schema prompts ({@code schema-prompts.jsonl}: a user prompt, a strict JSON schema, and whether the
 * demo model's tools are offered beside it), and the judge of one reply: valid when it ended with a stop token and
 * its content validates against the schema, or it is a call to an offered tool (strict tools' arguments validating).
 */
final class SchemaPrompts {
    private static final ObjectMapper JSON = new ObjectMapper();
    static final Tool ADD = new Tool(
            "add",
            "Adds two numbers.",
            "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"number\"},\"b\":{\"type\":\"number\"}},"
                    + "\"required\":[\"a\",\"b\"],\"additionalProperties\":false}",
            true);
    static final Tool WEATHER = new Tool(
            "get_weather",
            "Gets the weather.",
            "{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"}},\"required\":[\"city\"],"
                    + "\"additionalProperties\":false}",
            true);

    private SchemaPrompts() {}

    record Item(String prompt, String schema, boolean tools) {}

    enum Verdict {
        VALID,
        UNFINISHED,
        INVALID
    }

    record Outcome(Item item, Verdict verdict, Reply reply) {
        String describe() {
            return verdict + " " + item.prompt() + " | " + item.schema() + " -> content " + reply.content() + " calls "
                    + reply.toolCalls();
        }
    }

    static List<Item> items() {
        List<Item> out = new ArrayList<>();
        try (var in = SchemaPrompts.class.getResourceAsStream("schema-prompts.jsonl")) {
            BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
            for (String line; (line = r.readLine()) != null; ) {
                if (line.isBlank()) continue;
                JsonNode n = JSON.readTree(line);
                out.add(new Item(
                        n.get("prompt").asText(),
                        n.get("schema").toString(),
                        n.get("tools").asBoolean()));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out;
    }

    static ChatOptions options(Item item, Sampling sampling, int maxTokens) {
        return ChatOptions.defaults()
                .withSampling(sampling)
                .withMaxTokens(maxTokens)
                .withCurrentDate(java.time.LocalDate.of(2026, 1, 1))
                .withJsonSchema(item.schema());
    }

    static Conversation conversation(Item item) {
        List<Tool> tools = item.tools() ? List.of(ADD, WEATHER) : List.of();
        return new Conversation(null, tools, List.of(new Turn.User(item.prompt())));
    }

    /** {@code item}'s reply in a chat of its own. */
    static Outcome run(Engine engine, Item item, Sampling sampling, int maxTokens) {
        try (Chat chat = engine.newChat(options(item, sampling, maxTokens))) {
            return judge(item, chat.send(conversation(item), null));
        }
    }

    static Outcome judge(Item item, Reply r) {
        if (r.stopReason() != StopReason.STOP_TOKEN) return new Outcome(item, Verdict.UNFINISHED, r);
        boolean ok;
        if (!r.toolCalls().isEmpty()) {
            ok = item.tools() && r.content().isEmpty() && r.toolCalls().stream().allMatch(c -> validCall(c));
        } else {
            ok = violations(item.schema(), r.content()).isEmpty();
        }
        return new Outcome(item, ok ? Verdict.VALID : Verdict.INVALID, r);
    }

    private static boolean validCall(Reply.ToolCall c) {
        Tool t = c.functionName().equals(ADD.name()) ? ADD : c.functionName().equals(WEATHER.name()) ? WEATHER : null;
        return t != null && violations(t.parametersJson(), c.arguments()).isEmpty();
    }

    /** The oracle's complaints, or one when {@code json} is no JSON document at all. */
    static List<String> violations(String schema, String json) {
        try {
            JSON.readTree(json);
            if (json.isBlank()) return List.of("empty");
            return TestSchemas.violations(schema, json);
        } catch (Exception e) {
            return List.of("not JSON: " + e.getMessage());
        }
    }
}
