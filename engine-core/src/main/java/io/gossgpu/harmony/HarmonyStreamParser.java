package io.gossgpu.harmony;

import io.gossgpu.tokenizer.O200kHarmony;
import io.gossgpu.tokenizer.StreamingDecoder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Parses model output token by token into Harmony messages.
 *
 * <p>Start it where the prompt ends: after {@code <|start|>assistant} (the usual generation prompt) the
 * parser expects the rest of an assistant header ({@code <|channel|>analysis<|message|>...}); with a null
 * role it expects {@code <|start|>} first. Each {@link #accept(int)} returns the events that token caused:
 * a header being complete, content deltas (only whole characters; a character split across tokens comes
 * out once complete), message ends, tool calls, the end of the turn ({@code <|return|>} or {@code <|call|>}).
 * {@code <|end|>} ends a message and the model goes on with the next one.
 *
 * <p>The recipient may stand before or after {@code <|channel|>} in the header ({@code assistant to=functions.f<|channel|>commentary}
 * or {@code <|channel|>commentary to=functions.f}); a content type may follow ({@code <|constrain|>json}, {@code json}).
 *
 * <p>Never throws on model output: anything that breaks the format is reported as a {@link HarmonyEvent.Malformed}
 * event (and in {@link ParsedMessage#error()}), stray special tokens inside content are kept as text, and the
 * parser resynchronises on the next {@code <|start|>}. Not thread-safe.
 */
public final class HarmonyStreamParser {

    public enum State {
        EXPECT_START,
        HEADER,
        CONTENT,
        DONE
    }

    /** Tokens that end the assistant's turn: {@code <|return|>} (final answer done) and {@code <|call|>} (tool call). */
    public static final int[] STOP_TOKENS = {O200kHarmony.RETURN, O200kHarmony.CALL};

    /** True for {@code <|return|>} and {@code <|call|>}, where generation should stop. */
    public static boolean isStopToken(int token) {
        return token == O200kHarmony.RETURN || token == O200kHarmony.CALL;
    }

    /** A header longer than this many tokens is given up on and treated as content. */
    static final int MAX_HEADER_TOKENS = 256;

    private final O200kHarmony tok;
    private State state;
    private Role headerRole; // role known before the header (from the prompt), or null
    private final List<Integer> headerTokens = new ArrayList<>();
    private ParsedMessage current; // header of the message being read (CONTENT)
    private final StringBuilder content = new StringBuilder();
    private StreamingDecoder decoder;
    private String error; // first problem with the current message
    private String lastDelta = "";
    private int stopToken = -1;
    private final List<ParsedMessage> messages = new ArrayList<>();

    /** A parser for output that follows a prompt ending in {@code <|start|>assistant}. */
    public HarmonyStreamParser(O200kHarmony tok) {
        this(tok, Role.ASSISTANT);
    }

    /** @param role the role whose header the prompt has begun, or null to expect {@code <|start|>} first */
    public HarmonyStreamParser(O200kHarmony tok, Role role) {
        this.tok = tok;
        this.headerRole = role;
        this.state = role != null ? State.HEADER : State.EXPECT_START;
    }

    // ------------------------------------------------------------------ queries

    public State state() {
        return state;
    }

    /** True once {@code <|return|>} or {@code <|call|>} was seen. */
    public boolean isDone() {
        return stopToken >= 0;
    }

    /** {@code <|return|>}, {@code <|call|>}, or -1 while the turn goes on. */
    public int stopToken() {
        return stopToken;
    }

    /** Completed messages, in order. */
    public List<ParsedMessage> messages() {
        return List.copyOf(messages);
    }

    /** The header of the message whose content is being read, or null. */
    public ParsedMessage currentHeader() {
        return state == State.CONTENT ? current : null;
    }

    public Role currentRole() {
        return state == State.CONTENT ? current.role() : state == State.HEADER ? headerRole : null;
    }

    public String currentChannel() {
        return state == State.CONTENT ? current.channel() : null;
    }

    public String currentRecipient() {
        return state == State.CONTENT ? current.recipient() : null;
    }

    public String currentContentType() {
        return state == State.CONTENT ? current.contentType() : null;
    }

    /** Content of the current message so far. */
    public String currentContent() {
        return state == State.CONTENT ? content.toString() : "";
    }

    /** The text the last token added to the current message's content ("" if none). */
    public String lastDelta() {
        return lastDelta;
    }

    // ------------------------------------------------------------------ feeding

    /** Feeds one generated token; returns what it caused (often nothing). */
    public List<HarmonyEvent> accept(int token) {
        List<HarmonyEvent> ev = new ArrayList<>(2);
        lastDelta = "";
        if (token < 0 || token >= O200kHarmony.VOCAB_SIZE) {
            ev.add(new HarmonyEvent.Malformed("token id " + token + " outside the vocabulary, ignored"));
            return ev;
        }
        if (state == State.DONE) {
            ev.add(new HarmonyEvent.Malformed("token " + token + " after the end of the turn"));
            state = State.EXPECT_START;
        }
        switch (state) {
            case EXPECT_START -> expectStart(token, ev);
            case HEADER -> header(token, ev);
            case CONTENT -> content(token, ev);
            case DONE -> throw new AssertionError();
        }
        return ev;
    }

    /** Feeds several tokens; returns all events. */
    public List<HarmonyEvent> acceptAll(int... tokens) {
        List<HarmonyEvent> ev = new ArrayList<>();
        for (int t : tokens) ev.addAll(accept(t));
        return ev;
    }

    /**
     * The output ended (e.g. the token limit) without a stop token: a message being read is completed with
     * end token -1 and reported.
     */
    public List<HarmonyEvent> finish() {
        List<HarmonyEvent> ev = new ArrayList<>();
        lastDelta = "";
        if (state == State.CONTENT) {
            endMessage(-1, ev);
        } else if (state == State.HEADER && !headerTokens.isEmpty()) {
            ev.add(new HarmonyEvent.Malformed("output ended inside a message header"));
            ParsedMessage h = parseHeaderTokens();
            messages.add(h.withContent("", -1, joinError(h.error(), "output ended inside the header")));
            ev.add(new HarmonyEvent.MessageEnd(messages.getLast()));
            headerTokens.clear();
            state = State.EXPECT_START;
        }
        return ev;
    }

    private void expectStart(int token, List<HarmonyEvent> ev) {
        if (token == O200kHarmony.START) {
            headerRole = null;
            headerTokens.clear();
            state = State.HEADER;
        } else if (token == O200kHarmony.CHANNEL) {
            ev.add(new HarmonyEvent.Malformed("<|channel|> without <|start|>; assuming an assistant message"));
            headerRole = Role.ASSISTANT;
            headerTokens.clear();
            headerTokens.add(token);
            state = State.HEADER;
        } else if (token == O200kHarmony.RETURN || token == O200kHarmony.CALL) {
            ev.add(new HarmonyEvent.Malformed(tok.specialName(token).orElseThrow() + " outside a message"));
            turnEnd(token, ev);
        } else if (tok.isSpecial(token)) {
            ev.add(new HarmonyEvent.Malformed(tok.specialName(token).orElseThrow() + " outside a message, ignored"));
        } else {
            ev.add(new HarmonyEvent.Malformed("text outside a message; reading it as assistant content"));
            beginContent(
                    new ParsedMessage(
                            Role.ASSISTANT, Role.ASSISTANT.wire(), null, null, null, "", -1, "text outside a message"),
                    ev);
            content(token, ev);
        }
    }

    private void header(int token, List<HarmonyEvent> ev) {
        if (token == O200kHarmony.MESSAGE) {
            ParsedMessage h = parseHeaderTokens();
            headerTokens.clear();
            if (h.error() != null) ev.add(new HarmonyEvent.Malformed(h.error()));
            beginContent(h, ev);
        } else if (token == O200kHarmony.START) {
            ev.add(new HarmonyEvent.Malformed("<|start|> inside a message header; starting over"));
            headerRole = null;
            headerTokens.clear();
        } else if (token == O200kHarmony.END || token == O200kHarmony.RETURN || token == O200kHarmony.CALL) {
            ParsedMessage h = parseHeaderTokens();
            headerTokens.clear();
            String why = "message ended by " + tok.specialName(token).orElseThrow() + " before <|message|>";
            ev.add(new HarmonyEvent.Malformed(why));
            messages.add(h.withContent("", token, joinError(h.error(), why)));
            ev.add(new HarmonyEvent.MessageEnd(messages.getLast()));
            state = State.EXPECT_START;
            if (token != O200kHarmony.END) turnEnd(token, ev);
        } else if (headerTokens.size() >= MAX_HEADER_TOKENS) {
            String why = "message header longer than " + MAX_HEADER_TOKENS + " tokens; reading it as content";
            ev.add(new HarmonyEvent.Malformed(why));
            Role role = headerRole != null ? headerRole : Role.ASSISTANT;
            String text = tok.decode(toArray(headerTokens));
            headerTokens.clear();
            beginContent(new ParsedMessage(role, role.wire(), null, null, null, "", -1, why), ev);
            appendContent(text, ev);
            content(token, ev);
        } else {
            headerTokens.add(token);
        }
    }

    private void content(int token, List<HarmonyEvent> ev) {
        if (token == O200kHarmony.END || token == O200kHarmony.RETURN || token == O200kHarmony.CALL) {
            endMessage(token, ev);
            if (token != O200kHarmony.END) turnEnd(token, ev);
        } else if (token == O200kHarmony.START) {
            String why = "<|start|> before the message ended";
            ev.add(new HarmonyEvent.Malformed(why));
            error = joinError(error, why);
            endMessage(-1, ev);
            headerRole = null;
            headerTokens.clear();
            state = State.HEADER;
        } else if (tok.isSpecial(token)) {
            String name = tok.specialName(token).orElseThrow();
            String why = name + " inside message content; kept as text";
            ev.add(new HarmonyEvent.Malformed(why));
            error = joinError(error, why);
            appendContent(decoder.flush() + name, ev);
        } else {
            appendContent(decoder.accept(token), ev);
        }
    }

    private void beginContent(ParsedMessage header, List<HarmonyEvent> ev) {
        current = header;
        content.setLength(0);
        decoder = tok.newStreamingDecoder();
        error = header.error();
        state = State.CONTENT;
        ev.add(new HarmonyEvent.MessageStart(header));
    }

    private void appendContent(String s, List<HarmonyEvent> ev) {
        if (s.isEmpty()) return;
        content.append(s);
        lastDelta = lastDelta + s;
        ev.add(new HarmonyEvent.ContentDelta(s));
    }

    private void endMessage(int endToken, List<HarmonyEvent> ev) {
        appendContent(decoder.flush(), ev);
        if (endToken < 0 && error == null) error = "output ended before the message did";
        ParsedMessage m = current.withContent(content.toString(), endToken, error);
        messages.add(m);
        ev.add(new HarmonyEvent.MessageEnd(m));
        if (m.isToolCall()) {
            ev.add(new HarmonyEvent.ToolCall(
                    m.recipient(), m.functionName().orElse(null), m.content(), m.contentType()));
        }
        current = null;
        content.setLength(0);
        error = null;
        state = State.EXPECT_START;
    }

    private void turnEnd(int token, List<HarmonyEvent> ev) {
        stopToken = token;
        state = State.DONE;
        ev.add(new HarmonyEvent.TurnEnd(token));
    }

    private ParsedMessage parseHeaderTokens() {
        return parseHeader(tok.decode(toArray(headerTokens)), headerRole);
    }

    private static int[] toArray(List<Integer> l) {
        return l.stream().mapToInt(Integer::intValue).toArray();
    }

    private static String joinError(String a, String b) {
        return a == null ? b : b == null ? a : a + "; " + b;
    }

    // ------------------------------------------------------------------ header parsing

    private static final String CHANNEL_MARK = "<|channel|>";
    private static final String CONSTRAIN_MARK = "<|constrain|>";

    /**
     * Parses a message header written as text (special tokens as their names), e.g.
     * {@code assistant to=functions.f<|channel|>commentary <|constrain|>json} or, with {@code knownRole}
     * given by the prompt, {@code <|channel|>commentary to=functions.f <|constrain|>json}. Never throws;
     * problems go to {@link ParsedMessage#error()}.
     */
    public static ParsedMessage parseHeader(String header, Role knownRole) {
        String h = header;
        String channel = null;
        List<String> errors = new ArrayList<>();
        int ci = h.indexOf(CHANNEL_MARK);
        if (ci >= 0) {
            int start = ci + CHANNEL_MARK.length();
            int end = start;
            while (end < h.length() && !Character.isWhitespace(h.charAt(end)) && h.charAt(end) != '<') end++;
            if (end > start) channel = h.substring(start, end);
            else errors.add("empty channel in header");
            h = h.substring(0, ci) + " " + h.substring(end);
            if (h.contains(CHANNEL_MARK)) errors.add("more than one <|channel|> in header");
        }
        h = h.replace(CONSTRAIN_MARK, " " + CONSTRAIN_MARK).strip();
        List<String> parts = new ArrayList<>(Arrays.asList(h.isEmpty() ? new String[0] : h.split("\\s+")));

        Role role = knownRole;
        String author;
        if (role == null) {
            if (parts.isEmpty()) {
                errors.add("header has no role");
                role = Role.ASSISTANT;
                author = role.wire();
            } else {
                String first = parts.removeFirst();
                Role r = Role.fromWire(first).orElse(null);
                if (r == null && first.startsWith("to=")) {
                    errors.add("header has no role");
                    parts.addFirst(first);
                    role = Role.ASSISTANT;
                    author = role.wire();
                } else if (r == null) {
                    role = Role.TOOL;
                    author = first;
                } else {
                    role = r;
                    author = first;
                }
            }
        } else {
            author = role.wire();
            if (!parts.isEmpty() && parts.getFirst().equals(role.wire())) parts.removeFirst();
        }

        String recipient = null, contentType = null;
        List<String> bare = new ArrayList<>();
        for (int i = 0; i < parts.size(); i++) {
            String p = parts.get(i);
            if (p.startsWith("to=")) {
                if (recipient != null) errors.add("more than one recipient in header");
                recipient = p.substring(3);
            } else if (p.startsWith(CONSTRAIN_MARK)) {
                if (p.equals(CONSTRAIN_MARK)
                        && i + 1 < parts.size()
                        && !parts.get(i + 1).startsWith("to=")) p += parts.get(++i);
                if (contentType != null) errors.add("more than one content type in header");
                contentType = p;
            } else {
                bare.add(p);
            }
        }
        if (!bare.isEmpty()) {
            if (recipient == null
                    && contentType == null
                    && bare.size() == 1
                    && !bare.getFirst().equals("json")) {
                recipient = bare.getFirst(); // "assistant python": a bare recipient
            } else {
                if (contentType == null) contentType = bare.removeLast();
                if (recipient == null && !bare.isEmpty()) recipient = bare.removeFirst();
                if (!bare.isEmpty()) errors.add("unexpected text in header: " + String.join(" ", bare));
            }
        }
        return new ParsedMessage(
                role,
                author,
                channel,
                recipient,
                contentType,
                "",
                -1,
                errors.isEmpty() ? null : String.join("; ", errors));
    }
}
