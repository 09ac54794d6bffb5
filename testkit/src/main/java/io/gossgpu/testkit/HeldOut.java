package io.gossgpu.testkit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.gossgpu.api.Chat;
import io.gossgpu.api.HarmonyReplies;
import io.gossgpu.api.Reply;
import io.gossgpu.harmony.ConversationJson;
import io.gossgpu.harmony.Message;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

/**
 * The demo model's held-out questions ({@code scripts/train-demo/data.py} writes them beside the training data and
 * {@code build.sh} copies them here), and the greedy check of one reply: a plain question must be answered with
 * reasoning on the analysis channel and a final answer that is the item's {@code final} text; a tool question must
 * call the expected function with the expected JSON arguments, then, given the tool's result, answer with the item's
 * {@code final} text. The whole text, not a part of it: {@code contains("2 word")} took "There are 12 words." for 2.
 */
public final class HeldOut {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** One question. For tool families {@code toolName}, {@code toolArguments} and {@code toolResult} are set. */
    public record Item(
            String family,
            List<Message> messages,
            String finalText,
            String toolName,
            JsonNode toolArguments,
            String toolResult) {
        public boolean isTool() {
            return toolName != null;
        }
    }

    /** What the model did: whether it is right, the tokens it wrote (every reply's, in order) and its text. */
    public record Outcome(Item item, boolean correct, int[] tokens, String transcript) {}

    /**
     * The goal the shipped model is held to: at least 90 % of every family's held-out items answered
     * right. The model in the jar (scripts/train-demo/train.log) answers 19 or 20 of 20 in every family.
     */
    public static final double GOAL = 0.9;

    /** Whether {@code right} of {@code total} meets {@code share} (rounding the required count up). */
    public static boolean meets(long right, int total, double share) {
        return right >= Math.ceil(share * total - 1e-9);
    }

    private HeldOut() {}

    /** All held-out items, in file order (families in blocks). */
    public static List<Item> items() {
        List<Item> out = new ArrayList<>();
        try (var in = HeldOut.class.getResourceAsStream("/io/gossgpu/demo/heldout.jsonl")) {
            if (in == null) throw new IllegalStateException("no /io/gossgpu/demo/heldout.jsonl on the test class path");
            BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
            for (String line; (line = r.readLine()) != null; ) {
                if (line.isBlank()) continue;
                JsonNode n = JSON.readTree(line);
                ObjectNode conv = JSON.createObjectNode();
                conv.set("messages", n.get("messages"));
                JsonNode call = n.get("tool_call");
                out.add(new Item(
                        n.get("family").asText(),
                        ConversationJson.parse(conv),
                        n.get("final").asText(),
                        call != null ? call.get("name").asText() : null,
                        call != null ? JSON.readTree(call.get("arguments").asText()) : null,
                        n.has("tool_result") ? n.get("tool_result").asText() : null));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out;
    }

    /** The first {@code perFamily} items of each family. */
    public static List<Item> firstOfEachFamily(int perFamily) {
        Map<String, List<Item>> by = byFamily(items());
        List<Item> out = new ArrayList<>();
        for (List<Item> l : by.values()) out.addAll(l.subList(0, Math.min(perFamily, l.size())));
        return out;
    }

    public static Map<String, List<Item>> byFamily(List<Item> items) {
        Map<String, List<Item>> by = new LinkedHashMap<>();
        for (Item it : items)
            by.computeIfAbsent(it.family(), f -> new ArrayList<>()).add(it);
        return by;
    }

    /** Answers {@code item} greedily in {@code chat} (which keeps nothing between items: each reply gets the whole conversation). */
    public static Outcome answer(Chat chat, Item item, int maxTokens) {
        Reply r = HarmonyReplies.greedy(chat, item.messages(), maxTokens);
        StringBuilder t = new StringBuilder("[analysis] ")
                .append(r.reasoning())
                .append(" [final] ")
                .append(r.content());
        if (!item.isTool()) {
            boolean ok = !r.reasoning().isBlank() && r.toolCalls().isEmpty() && isFinal(item, r.content());
            return new Outcome(item, ok, r.tokens(), t.toString());
        }
        r.toolCalls()
                .forEach(c -> t.append(" [call] ")
                        .append(c.functionName())
                        .append(' ')
                        .append(c.arguments()));
        boolean called = r.toolCalls().size() == 1
                && r.toolCalls().getFirst().functionName().equals(item.toolName())
                && item.toolArguments().equals(parse(r.toolCalls().getFirst().arguments()));
        if (!called) return new Outcome(item, false, r.tokens(), t.toString());
        List<Message> next = new ArrayList<>(item.messages());
        next.add(Message.toolCall(item.toolName(), r.toolCalls().getFirst().arguments()));
        next.add(Message.toolResult(item.toolName(), item.toolResult()));
        Reply r2 = HarmonyReplies.greedy(chat, next, maxTokens);
        t.append(" [tool] ")
                .append(item.toolResult())
                .append(" [analysis] ")
                .append(r2.reasoning())
                .append(" [final] ")
                .append(r2.content());
        boolean ok = r2.toolCalls().isEmpty() && isFinal(item, r2.content());
        return new Outcome(
                item,
                ok,
                IntStream.concat(IntStream.of(r.tokens()), IntStream.of(r2.tokens()))
                        .toArray(),
                t.toString());
    }

    /** Whether {@code content}, the reply's final channel, is the item's final text (surrounding white space aside). */
    static boolean isFinal(Item item, String content) {
        return content.strip().equals(item.finalText().strip());
    }

    private static JsonNode parse(String json) {
        try {
            return JSON.readTree(json);
        } catch (IOException e) {
            return null;
        }
    }

    /** Per family: correct / total, as a markdown table row set ("| family | 19/20 |"). */
    public static String table(List<Outcome> outcomes) {
        Map<String, int[]> by = new LinkedHashMap<>();
        for (Outcome o : outcomes) {
            int[] c = by.computeIfAbsent(o.item().family(), f -> new int[2]);
            c[0] += o.correct() ? 1 : 0;
            c[1]++;
        }
        StringBuilder sb = new StringBuilder();
        by.forEach((f, c) -> sb.append("| ")
                .append(f)
                .append(" | ")
                .append(c[0])
                .append('/')
                .append(c[1])
                .append(" |\n"));
        return sb.toString();
    }
}
