package io.gossgpu.cli;

import io.gossgpu.api.Tokens;
import java.io.PrintStream;

/**
 * Shows the text of generated tokens that the Harmony parser swallows, so that a chat whose model does not write
 * well-formed Harmony (a random-weight model, a damaged one) streams instead of looking frozen. A real message
 * header is a few tokens long: swallowed text is held back until {@link #HEADER_LIMIT} tokens have gone by without
 * any message text, then printed (dimmed on a terminal) and streamed from then on. Fed by the chat listener: every
 * token first ({@link #token}), then {@link #parsed} when the parser made text of it.
 */
final class UnparsedText {
    static final int HEADER_LIMIT = 24;

    private final PrintStream out;
    private final boolean color;
    private final Tokens.TextDecoder decoder = Tokens.newStreamingDecoder();
    private final StringBuilder held = new StringBuilder();
    private String last = "";
    private boolean lastParsed = true, streaming, any;
    private int heldTokens;

    UnparsedText(PrintStream out, boolean color) {
        this.out = out;
        this.color = color;
    }

    void token(int id) {
        settle();
        last = decoder.accept(id);
        lastParsed = false;
    }

    /** The parser turned the last token into reasoning, content or a tool call: held text was a real header. */
    void parsed() {
        lastParsed = true;
        held.setLength(0);
        heldTokens = 0;
    }

    /** Whether any swallowed text was shown. */
    boolean shown() {
        return any;
    }

    /** The end of the reply: shows what is still held when no message text came at all. */
    void finish(boolean messageText) {
        settle();
        if (!messageText && !held.isEmpty()) show(held.toString());
        held.setLength(0);
    }

    private void settle() {
        if (lastParsed || last.isEmpty()) return;
        lastParsed = true;
        if (streaming) {
            show(last);
            return;
        }
        held.append(last);
        if (++heldTokens >= HEADER_LIMIT) {
            streaming = true;
            show(held.toString());
            held.setLength(0);
        }
    }

    private void show(String text) {
        out.print(color ? "\u001b[2m" + text + "\u001b[0m" : text);
        out.flush();
        any = true;
    }
}
