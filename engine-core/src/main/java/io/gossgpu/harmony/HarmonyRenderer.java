package io.gossgpu.harmony;

import com.fasterxml.jackson.databind.JsonNode;
import io.gossgpu.tokenizer.O200kHarmony;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Renders Harmony conversations to tokens (and, for debugging, to text with the special tokens written out),
 * the way OpenAI's harmony library renders them for gpt-oss.
 *
 * <pre>
 * &lt;|start|&gt;{role or tool name}[ to={recipient}][&lt;|channel|&gt;{channel}][ {content type}]&lt;|message|&gt;{content}&lt;|end|&gt;
 * </pre>
 * An assistant message with a recipient (a tool call) ends with {@code <|call|>} instead of {@code <|end|>}; the
 * recipient {@code all} means "no recipient" and is not written.
 * A content type that starts with {@code <|constrain|>} is written as a space, the special token and the rest.
 * Every text piece is encoded separately with {@link O200kHarmony#encode} (special-token strings inside
 * message text stay ordinary text, so user text cannot forge message boundaries).
 *
 * <p>Chain of thought: an assistant {@code analysis} message is left out when an assistant {@code final}
 * message comes after it in the conversation (the format guide: drop earlier CoT once a turn has ended in a
 * final answer; analysis messages of an unfinished tool-calling turn are kept). See {@link #dropsAnalysis}.
 */
public final class HarmonyRenderer {

    private final O200kHarmony tok;

    public HarmonyRenderer(O200kHarmony tok) {
        this.tok = tok;
    }

    public HarmonyRenderer() {
        this(O200kHarmony.get());
    }

    /** Where rendering goes: tokens or debugging text. */
    private interface Out {
        void special(int id);

        void text(String s);
    }

    private final class TokenOut implements Out {
        final List<int[]> parts = new ArrayList<>();
        int n;

        public void special(int id) {
            parts.add(new int[] {id});
            n++;
        }

        public void text(String s) {
            int[] t = tok.encode(s);
            parts.add(t);
            n += t.length;
        }

        int[] toArray() {
            int[] a = new int[n];
            int i = 0;
            for (int[] p : parts) {
                System.arraycopy(p, 0, a, i, p.length);
                i += p.length;
            }
            return a;
        }
    }

    private final class TextOut implements Out {
        final StringBuilder sb = new StringBuilder();

        public void special(int id) {
            sb.append(tok.specialName(id).orElseThrow());
        }

        public void text(String s) {
            sb.append(s);
        }
    }

    // ------------------------------------------------------------------ public API

    /** Tokens of a whole conversation (analysis messages superseded by a later final answer are dropped). */
    public int[] renderConversation(List<Message> conversation) {
        TokenOut out = new TokenOut();
        conversation(conversation, out);
        return out.toArray();
    }

    /** Tokens of the conversation followed by {@code <|start|>assistant}: the prompt for the next assistant turn. */
    public int[] renderForCompletion(List<Message> conversation) {
        TokenOut out = new TokenOut();
        conversation(conversation, out);
        out.special(O200kHarmony.START);
        out.text(Role.ASSISTANT.wire());
        return out.toArray();
    }

    /** The same as {@link #renderForCompletion} as text, special tokens written as their names (for {@code --harmony} debugging). */
    public String renderForCompletionText(List<Message> conversation) {
        TextOut out = new TextOut();
        conversation(conversation, out);
        out.special(O200kHarmony.START);
        out.text(Role.ASSISTANT.wire());
        return out.sb.toString();
    }

    /**
     * A conversation whose last messages are one assistant turn, as a model sees and writes it: the prompt for
     * that turn ({@link #renderForCompletion} of the messages before it) followed by the tokens the model
     * generates, message after message, the turn ending in {@code <|return|>} after a final answer (in place of the
     * history's {@code <|end|>}) or in {@code <|call|>} after a tool call. Training data is made of these.
     *
     * @param tokens       prompt then completion
     * @param promptLength where the completion starts: {@code tokens[promptLength..]} are the model's to write
     */
    public record Turn(int[] tokens, int promptLength) {}

    /** See {@link Turn}; the conversation must end with an assistant turn that ends in a final answer or a tool call. */
    public Turn renderTurn(List<Message> conversation) {
        int first = conversation.size();
        while (first > 0 && conversation.get(first - 1).role() == Role.ASSISTANT) first--;
        if (first == conversation.size())
            throw new IllegalArgumentException("the conversation does not end with an assistant message");
        if (first == 0) throw new IllegalArgumentException("the conversation is only assistant messages");
        Message last = conversation.getLast();
        boolean call = last.recipient() != null && !last.recipient().equals("all");
        if (!call && !"final".equals(last.channel()))
            throw new IllegalArgumentException("the assistant's turn must end with a final message or a tool call");
        int[] prompt = renderForCompletion(conversation.subList(0, first));
        int header = 1 + tok.encode(Role.ASSISTANT.wire()).length; // <|start|>assistant, which the prompt ends with
        boolean fn = hasFunctionTools(conversation);
        int[] tokens = prompt;
        for (int i = first; i < conversation.size(); i++) {
            int[] m = render(conversation.get(i), fn);
            if (i == first) m = Arrays.copyOfRange(m, header, m.length);
            if (i == conversation.size() - 1 && !call) m[m.length - 1] = O200kHarmony.RETURN;
            int at = tokens.length;
            tokens = Arrays.copyOf(tokens, at + m.length);
            System.arraycopy(m, 0, tokens, at, m.length);
        }
        return new Turn(tokens, prompt.length);
    }

    /** The conversation as text, special tokens written as their names. */
    public String renderConversationText(List<Message> conversation) {
        TextOut out = new TextOut();
        conversation(conversation, out);
        return out.sb.toString();
    }

    /** Tokens of one message. {@code hasFunctionTools} adds the 'functions' line to a system message. */
    public int[] render(Message m, boolean hasFunctionTools) {
        TokenOut out = new TokenOut();
        message(m, hasFunctionTools, out);
        return out.toArray();
    }

    /** One message as text, special tokens written as their names. */
    public String renderText(Message m, boolean hasFunctionTools) {
        TextOut out = new TextOut();
        message(m, hasFunctionTools, out);
        return out.sb.toString();
    }

    /** True when message {@code index} is an analysis message that a later assistant final message supersedes. */
    public static boolean dropsAnalysis(List<Message> conversation, int index) {
        Message m = conversation.get(index);
        if (m.role() != Role.ASSISTANT || !"analysis".equals(m.channel())) return false;
        for (int j = index + 1; j < conversation.size(); j++) {
            Message later = conversation.get(j);
            if (later.role() == Role.ASSISTANT && "final".equals(later.channel())) return true;
        }
        return false;
    }

    /** True when a developer message of the conversation offers at least one function tool. */
    public static boolean hasFunctionTools(List<Message> conversation) {
        for (Message m : conversation)
            if (m.developer() != null && !m.developer().functionTools().isEmpty()) return true;
        return false;
    }

    // ------------------------------------------------------------------ rendering

    private void conversation(List<Message> conversation, Out out) {
        boolean fn = hasFunctionTools(conversation);
        for (int i = 0; i < conversation.size(); i++) {
            if (dropsAnalysis(conversation, i)) continue;
            message(conversation.get(i), fn, out);
        }
    }

    private void message(Message m, boolean hasFunctionTools, Out out) {
        out.special(O200kHarmony.START);
        if (m.role() == Role.TOOL) {
            out.text(m.name());
        } else {
            out.text(m.role().wire());
            if (m.name() != null && !m.name().isEmpty()) out.text(":" + m.name());
        }
        if (m.recipient() != null && !m.recipient().equals("all")) out.text(" to=" + m.recipient());
        if (m.channel() != null) {
            out.special(O200kHarmony.CHANNEL);
            out.text(m.channel());
        }
        if (m.contentType() != null) {
            String constrain = "<|constrain|>";
            if (m.contentType().startsWith(constrain)) {
                out.text(" ");
                out.special(O200kHarmony.CONSTRAIN);
                String rest = m.contentType().substring(constrain.length());
                if (!rest.isEmpty()) out.text(rest);
            } else {
                out.text(" " + m.contentType());
            }
        }
        out.special(O200kHarmony.MESSAGE);
        if (m.system() != null) out.text(systemText(m.system(), hasFunctionTools));
        else if (m.developer() != null) out.text(developerText(m.developer()));
        else if (!m.text().isEmpty()) out.text(m.text());
        boolean toolCall = m.role() == Role.ASSISTANT
                && m.recipient() != null
                && !m.recipient().equals("all");
        out.special(toolCall ? O200kHarmony.CALL : O200kHarmony.END);
    }

    /** The body of a system message. */
    public static String systemText(SystemContent s, boolean hasFunctionTools) {
        List<String> sections = new ArrayList<>();
        List<String> top = new ArrayList<>();
        if (s.modelIdentity() != null) top.add(s.modelIdentity());
        if (s.knowledgeCutoff() != null) top.add("Knowledge cutoff: " + s.knowledgeCutoff());
        if (s.currentDate() != null) top.add("Current date: " + s.currentDate());
        if (!top.isEmpty()) sections.add(String.join("\n", top));
        if (s.reasoningEffort() != null)
            sections.add("Reasoning: " + s.reasoningEffort().wire());
        if (!s.validChannels().isEmpty()) {
            StringBuilder c = new StringBuilder("# Valid channels: ")
                    .append(String.join(", ", s.validChannels()))
                    .append('.');
            if (s.channelRequired()) c.append(" Channel must be included for every message.");
            if (hasFunctionTools) c.append("\nCalls to these tools must go to the commentary channel: 'functions'.");
            sections.add(c.toString());
        }
        return String.join("\n\n", sections);
    }

    /** The body of a developer message. */
    public static String developerText(DeveloperContent d) {
        List<String> sections = new ArrayList<>();
        if (d.instructions() != null) {
            sections.add("# Instructions");
            sections.add(d.instructions());
        }
        if (!d.functionTools().isEmpty()) sections.add(toolsSection("functions", null, d.functionTools()));
        if (d.responseFormat() != null) sections.add(responseFormatsSection(d.responseFormat()));
        return String.join("\n\n", sections);
    }

    /**
     * {@code conversation} with {@code section} (null: none) as the developer message's response format, as Harmony
     * shows the model the schema its answer must follow; a developer message is added after the leading system
     * message when there is none. Idempotent: a format already there is replaced.
     */
    public static List<Message> withResponseFormat(
            List<Message> conversation, DeveloperContent.ResponseFormatSection section) {
        if (section == null) return conversation;
        List<Message> out = new ArrayList<>(conversation);
        int at = 0;
        while (at < out.size() && out.get(at).role() == Role.SYSTEM) at++;
        if (at < out.size() && out.get(at).role() == Role.DEVELOPER) {
            Message d = out.get(at);
            DeveloperContent c = d.developer() != null
                    ? d.developer()
                    : new DeveloperContent(d.text() == null || d.text().isBlank() ? null : d.text(), List.of());
            out.set(at, Message.developer(c.withResponseFormat(section)));
        } else {
            out.add(at, Message.developer(new DeveloperContent(null, List.of(), section)));
        }
        return out;
    }

    /** The {@code # Response Formats} section (last in the developer message, as Harmony places it). */
    public static String responseFormatsSection(DeveloperContent.ResponseFormatSection f) {
        StringBuilder sb =
                new StringBuilder("# Response Formats\n\n## ").append(f.name()).append("\n\n");
        if (f.description() != null && !f.description().isBlank())
            for (String l : f.description().lines().toList())
                sb.append("// ").append(l).append('\n');
        return sb.append(f.schema()).toString();
    }

    /** The {@code # Tools} section for one namespace of tools. */
    public static String toolsSection(String namespace, String namespaceDescription, List<ToolDescription> tools) {
        List<String> lines = new ArrayList<>();
        lines.add("## " + namespace + "\n");
        if (namespaceDescription != null) {
            for (String l : namespaceDescription.lines().toList()) lines.add(tools.isEmpty() ? l : "// " + l);
        }
        if (!tools.isEmpty()) {
            lines.add("namespace " + namespace + " {\n");
            for (ToolDescription t : tools) {
                for (String l : t.description().lines().toList()) lines.add("// " + l);
                if (t.parameters() != null && !t.parameters().isNull()) {
                    lines.add("type " + t.name() + " = (_: " + schemaToTypeScript(t.parameters(), "") + ") => any;\n");
                } else {
                    lines.add("type " + t.name() + " = () => any;\n");
                }
            }
            lines.add("} // namespace " + namespace);
        }
        return "# Tools\n\n" + String.join("\n", lines);
    }

    // ------------------------------------------------------------------ JSON schema → TypeScript-like types

    private static boolean isEnum(JsonNode s) {
        JsonNode e = s.get("enum");
        return e != null && e.isArray() && !e.isEmpty();
    }

    private static String defaultComment(JsonNode schema, JsonNode def) {
        if (def.isTextual()) return isEnum(schema) ? "default: " + def.asText() : "default: \"" + def.asText() + "\"";
        return "default: " + def.toString();
    }

    private static boolean nullable(JsonNode s) {
        JsonNode n = s.get("nullable");
        return n != null && n.isBoolean() && n.asBoolean();
    }

    private static String text(JsonNode s, String field) {
        JsonNode v = s.get(field);
        return v != null && v.isTextual() ? v.asText() : null;
    }

    /**
     * A JSON schema as the TypeScript-like type Harmony uses in tool definitions: objects as
     * {@code {\n// description\nname?: type, // default: x\n}}, string enums as {@code "a" | "b"}, integer as
     * {@code number}, arrays as {@code T[]}, oneOf as {@code | } alternatives, anything else as {@code any}.
     */
    public static String schemaToTypeScript(JsonNode schema, String indent) {
        JsonNode oneOf = schema.get("oneOf");
        if (oneOf != null && oneOf.isArray()) {
            StringBuilder out = new StringBuilder();
            for (JsonNode v : oneOf) {
                out.append('\n').append(indent).append(" | ");
                String t = schemaToTypeScript(v, indent + "   ");
                if (nullable(v) && !t.contains("null")) t += " | null";
                out.append(t);
                List<String> trailing = new ArrayList<>();
                String d = text(v, "description");
                if (d != null) trailing.add(d);
                JsonNode def = v.get("default");
                if (def != null) trailing.add(defaultComment(v, def));
                if (!trailing.isEmpty()) out.append(" // ").append(String.join(" ", trailing));
            }
            return out.toString();
        }
        JsonNode type = schema.get("type");
        if (type != null && type.isArray()) {
            List<String> ts = new ArrayList<>();
            for (JsonNode t : type) if (t.isTextual()) ts.add(t.asText().equals("integer") ? "number" : t.asText());
            if (!ts.isEmpty()) return String.join(" | ", ts);
        }
        if (type == null || !type.isTextual()) return "any";
        switch (type.asText()) {
            case "object":
                return objectType(schema, indent);
            case "string": {
                if (isEnum(schema)) {
                    List<String> vals = new ArrayList<>();
                    for (JsonNode v : schema.get("enum")) if (v.isTextual()) vals.add("\"" + v.asText() + "\"");
                    if (!vals.isEmpty()) return String.join(" | ", vals);
                }
                return "string";
            }
            case "number":
            case "integer":
                return "number";
            case "boolean":
                return "boolean";
            case "array": {
                JsonNode items = schema.get("items");
                return items != null ? schemaToTypeScript(items, indent) + "[]" : "Array<any>";
            }
            default:
                return "any";
        }
    }

    private static String objectType(JsonNode schema, String indent) {
        StringBuilder out = new StringBuilder();
        String desc = text(schema, "description");
        if (desc != null) out.append(indent).append("// ").append(desc).append('\n');
        out.append("{\n");
        JsonNode props = schema.get("properties");
        if (props != null && props.isObject()) {
            Set<String> required = new HashSet<>();
            JsonNode req = schema.get("required");
            if (req != null && req.isArray()) for (JsonNode r : req) if (r.isTextual()) required.add(r.asText());
            for (Iterator<Map.Entry<String, JsonNode>> it = props.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> e = it.next();
                String key = e.getKey();
                JsonNode val = e.getValue();
                String opt = required.contains(key) ? "" : "?";
                String title = text(val, "title");
                if (title != null)
                    out.append(indent)
                            .append("// ")
                            .append(title)
                            .append('\n')
                            .append(indent)
                            .append("//\n");
                JsonNode oneOf = val.get("oneOf");
                String pdesc = text(val, "description");
                if (oneOf == null && pdesc != null)
                    out.append(indent).append("// ").append(pdesc).append('\n');
                JsonNode examples = val.get("examples");
                if (examples != null && examples.isArray() && !examples.isEmpty()) {
                    out.append(indent).append("// Examples:\n");
                    for (JsonNode ex : examples)
                        if (ex.isTextual())
                            out.append(indent)
                                    .append("// - \"")
                                    .append(ex.asText())
                                    .append("\"\n");
                }
                if (oneOf != null && oneOf.isArray()) {
                    boolean skipDesc =
                            pdesc != null && !oneOf.isEmpty() && pdesc.equals(text(oneOf.get(0), "description"));
                    boolean descAbove = false;
                    if (!skipDesc && pdesc != null) {
                        out.append(indent).append("// ").append(pdesc).append('\n');
                        descAbove = true;
                    }
                    JsonNode def = val.get("default");
                    if (def != null)
                        out.append(indent)
                                .append("// ")
                                .append(defaultComment(val, def))
                                .append('\n');
                    out.append(indent).append(key).append(opt).append(":\n");
                    int i = 0;
                    for (JsonNode v : oneOf) {
                        out.append(indent).append(" | ");
                        String t = schemaToTypeScript(v, indent + "   ");
                        if (nullable(v) && !t.contains("null")) t += " | null";
                        out.append(t);
                        List<String> trailing = new ArrayList<>();
                        String vd = text(v, "description");
                        if (!(i == 0 && descAbove) && vd != null && !vd.equals(pdesc)) trailing.add(vd);
                        JsonNode vdef = v.get("default");
                        if (vdef != null) trailing.add(defaultComment(v, vdef));
                        if (!trailing.isEmpty()) out.append(" // ").append(String.join(" ", trailing));
                        out.append('\n');
                        i++;
                    }
                    out.append(indent).append(",\n");
                    continue;
                }
                out.append(indent).append(key).append(opt).append(": ");
                String t = schemaToTypeScript(val, indent + "    ");
                if (nullable(val) && !t.contains("null")) t += " | null";
                out.append(t).append(',');
                JsonNode def = val.get("default");
                if (def != null) out.append(" // ").append(defaultComment(val, def));
                out.append('\n');
            }
        }
        out.append(indent).append('}');
        return out.toString();
    }
}
