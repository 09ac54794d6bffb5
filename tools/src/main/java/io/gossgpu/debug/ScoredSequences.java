package io.gossgpu.debug;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.gossgpu.GossException;
import io.gossgpu.harmony.ConversationJson;
import io.gossgpu.harmony.HarmonyRenderer;
import io.gossgpu.tokenizer.O200kHarmony;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The sequences {@link LogitAgreement} scores: Harmony conversations (each scored over the assistant turn it ends with,
 * as the model writes it: from the last prompt token on), or a plain text cut into chunks (each scored over its second
 * half, so every scored position has at least half a chunk of context, as llama-perplexity does).
 */
public final class ScoredSequences {
    /** The demo model's held-out conversations, in the jar ({@code scripts/train-demo} writes them; the tests score them too). */
    public static final String DEMO_HELD_OUT = "/io/gossgpu/demo/heldout.jsonl";

    private ScoredSequences() {}

    /** The demo model's held-out conversations: {@link #conversations} of {@link #DEMO_HELD_OUT}. */
    public static List<LogitAgreement.Sequence> demoHeldOut(int limit) {
        InputStream in = ScoredSequences.class.getResourceAsStream(DEMO_HELD_OUT);
        if (in == null)
            throw new GossException(
                    "the demo model's held-out conversations are not in this build (" + DEMO_HELD_OUT + ")");
        return conversations(in, "the demo model's held-out set", limit);
    }

    /**
     * JSON lines, each a conversation ({@code {"messages": [...]}}, ending with an assistant turn, as {@code render}
     * reads) or a held-out item whose {@code references} are conversations; at most {@code limit} sequences, spread
     * evenly over the set (a held-out file holds its families in blocks).
     */
    public static List<LogitAgreement.Sequence> conversations(InputStream in, String source, int limit) {
        ObjectMapper json = new ObjectMapper();
        HarmonyRenderer renderer = new HarmonyRenderer(O200kHarmony.get());
        List<LogitAgreement.Sequence> out = new ArrayList<>();
        int lineNo = 0;
        try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
            for (String line; (line = r.readLine()) != null; ) {
                lineNo++;
                if (line.isBlank()) continue;
                try {
                    JsonNode n = json.readTree(line);
                    List<JsonNode> convs = new ArrayList<>();
                    if (n.has("references"))
                        n.get("references")
                                .forEach(
                                        ref -> convs.add(json.createObjectNode().set("messages", ref)));
                    else convs.add(n);
                    for (JsonNode c : convs) {
                        HarmonyRenderer.Turn t = renderer.renderTurn(ConversationJson.parse(c));
                        out.add(new LogitAgreement.Sequence(t.tokens(), t.promptLength() - 1));
                    }
                } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
                    throw new GossException(source + " line " + lineNo + ": not JSON: " + e.getOriginalMessage());
                } catch (IOException | IllegalArgumentException | java.time.DateTimeException e) {
                    throw new GossException(source + " line " + lineNo + ": " + e.getMessage());
                }
            }
        } catch (IOException e) {
            throw new GossException("reading " + source + ": " + e.getMessage());
        }
        if (out.isEmpty()) throw new GossException(source + " holds no conversation");
        return spread(out, limit);
    }

    /** {@code limit} of {@code all}, evenly spaced from the first (all of them when they are no more). */
    static <T> List<T> spread(List<T> all, int limit) {
        if (all.size() <= limit) return all;
        List<T> out = new ArrayList<>(limit);
        for (int i = 0; i < limit; i++) out.add(all.get((int) ((long) i * all.size() / limit)));
        return out;
    }

    /** {@code text} tokenized and cut into chunks of {@code chunk} tokens (the last may be shorter), at most {@code limit}. */
    public static List<LogitAgreement.Sequence> text(String text, int chunk, int limit) {
        if (chunk < 2) throw new GossException("a text chunk needs at least 2 tokens, got " + chunk);
        int[] ids = O200kHarmony.get().encode(text);
        List<LogitAgreement.Sequence> out = new ArrayList<>();
        for (int at = 0; at + 1 < ids.length && out.size() < limit; at += chunk) {
            int[] c = Arrays.copyOfRange(ids, at, Math.min(ids.length, at + chunk));
            out.add(new LogitAgreement.Sequence(c, c.length / 2));
        }
        if (out.isEmpty()) throw new GossException("the text holds fewer than 2 tokens");
        return out;
    }
}
