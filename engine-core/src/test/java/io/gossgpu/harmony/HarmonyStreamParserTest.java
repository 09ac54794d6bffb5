package io.gossgpu.harmony;

import static org.junit.jupiter.api.Assertions.*;

import io.gossgpu.harmony.HarmonyEvent.*;
import io.gossgpu.tokenizer.O200kHarmony;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class HarmonyStreamParserTest {
    final O200kHarmony tok = O200kHarmony.get();

    static <T> List<T> only(List<HarmonyEvent> ev, Class<T> c) {
        List<T> out = new ArrayList<>();
        for (HarmonyEvent e : ev) if (c.isInstance(e)) out.add(c.cast(e));
        return out;
    }

    static String deltas(List<HarmonyEvent> ev) {
        StringBuilder sb = new StringBuilder();
        for (ContentDelta d : only(ev, ContentDelta.class)) sb.append(d.text());
        return sb.toString();
    }

    @Test
    void analysisThenFinalFromTheGuide() {
        // token ids of the guide's streaming example (output after "<|start|>assistant")
        int[] ids = {
            200005, 35644, 200008, 1844, 31064, 25, 392, 4827, 382, 220, 17, 659, 220, 17, 16842, 12295, 81645, 13,
            51441, 6052, 13, 200007, 200006, 173781, 200005, 17196, 200008, 17, 659, 220, 17, 314, 220, 19, 13, 200002
        };
        String text =
                "<|channel|>analysis<|message|>User asks: \"What is 2 + 2?\" Simple arithmetic. Provide answer.<|end|>"
                        + "<|start|>assistant<|channel|>final<|message|>2 + 2 = 4.<|return|>";
        assertArrayEquals(ids, tok.encodeWithSpecials(text));

        HarmonyStreamParser p = new HarmonyStreamParser(tok);
        List<HarmonyEvent> all = new ArrayList<>();
        for (int i = 0; i < ids.length; i++) {
            all.addAll(p.accept(ids[i]));
            if (i == 3) { // after "<|message|>User"
                assertEquals("analysis", p.currentChannel());
                assertEquals(Role.ASSISTANT, p.currentRole());
                assertEquals("User", p.currentContent());
                assertEquals("User", p.lastDelta());
            }
        }
        assertTrue(p.isDone());
        assertEquals(O200kHarmony.RETURN, p.stopToken());
        assertEquals(HarmonyStreamParser.State.DONE, p.state());
        assertTrue(only(all, Malformed.class).isEmpty(), all.toString());
        List<ParsedMessage> ms = p.messages();
        assertEquals(2, ms.size());
        assertEquals(
                new ParsedMessage(
                        Role.ASSISTANT,
                        "assistant",
                        "analysis",
                        null,
                        null,
                        "User asks: \"What is 2 + 2?\" Simple arithmetic. Provide answer.",
                        O200kHarmony.END,
                        null),
                ms.get(0));
        assertEquals(
                new ParsedMessage(
                        Role.ASSISTANT, "assistant", "final", null, null, "2 + 2 = 4.", O200kHarmony.RETURN, null),
                ms.get(1));
        assertEquals(ms.get(0).content() + ms.get(1).content(), deltas(all));
        assertEquals(List.of(new TurnEnd(O200kHarmony.RETURN)), only(all, TurnEnd.class));
        assertEquals(2, only(all, MessageStart.class).size());
        assertTrue(only(all, ToolCall.class).isEmpty());
    }

    @Test
    void toolCallWithRecipientAfterChannel() {
        HarmonyStreamParser p = new HarmonyStreamParser(tok);
        List<HarmonyEvent> ev = p.acceptAll(
                tok.encodeWithSpecials(
                        "<|channel|>analysis<|message|>Need to use function get_weather.<|end|>"
                                + "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"location\":\"San Francisco\"}<|call|>"));
        assertTrue(only(ev, Malformed.class).isEmpty(), ev.toString());
        assertEquals(
                List.of(new ToolCall(
                        "functions.get_weather",
                        "get_weather",
                        "{\"location\":\"San Francisco\"}",
                        "<|constrain|>json")),
                only(ev, ToolCall.class));
        assertEquals(List.of(new TurnEnd(O200kHarmony.CALL)), only(ev, TurnEnd.class));
        ParsedMessage call = p.messages().get(1);
        assertEquals("commentary", call.channel());
        assertEquals(O200kHarmony.CALL, call.endToken());
        assertTrue(call.isToolCall());
    }

    @Test
    void toolCallWithRecipientBeforeChannelAndNoStartRole() {
        HarmonyStreamParser p = new HarmonyStreamParser(tok, null);
        p.acceptAll(tok.encodeWithSpecials(
                "<|start|>assistant to=functions.lookup<|channel|>commentary<|constrain|>json<|message|>{}<|call|>"));
        ParsedMessage m = p.messages().getFirst();
        assertEquals("functions.lookup", m.recipient());
        assertEquals("commentary", m.channel());
        assertEquals("<|constrain|>json", m.contentType());
        assertEquals("lookup", m.functionName().orElseThrow());
        assertNull(m.error());
        // the parsed message renders back to the same text
        assertEquals(
                "<|start|>assistant to=functions.lookup<|channel|>commentary <|constrain|>json<|message|>{}<|call|>",
                new HarmonyRenderer(tok).renderText(m.toMessage(), false));
    }

    @Test
    void contentDeltasWaitForSplitCharacters() {
        HarmonyStreamParser p = new HarmonyStreamParser(tok);
        p.acceptAll(tok.encodeWithSpecials("<|channel|>final<|message|>"));
        List<String> deltas = new ArrayList<>();
        for (byte b : "日本!".getBytes(StandardCharsets.UTF_8)) {
            for (ContentDelta d : only(p.accept(tok.rankOf(new byte[] {b})), ContentDelta.class)) deltas.add(d.text());
        }
        assertEquals(List.of("日", "本", "!"), deltas);
        assertEquals("日本!", p.currentContent());
        p.accept(O200kHarmony.RETURN);
        assertEquals("日本!", p.messages().getFirst().content());
    }

    @Test
    void parsesHeaders() {
        ParsedMessage h =
                HarmonyStreamParser.parseHeader("functions.get_weather to=assistant<|channel|>commentary", null);
        assertEquals(Role.TOOL, h.role());
        assertEquals("functions.get_weather", h.author());
        assertEquals("assistant", h.recipient());
        assertEquals("commentary", h.channel());
        assertNull(h.error());

        h = HarmonyStreamParser.parseHeader("<|channel|>commentary json", Role.ASSISTANT);
        assertEquals("json", h.contentType());
        assertNull(h.recipient());

        h = HarmonyStreamParser.parseHeader("assistant to=functions.f<|channel|>commentary json", Role.ASSISTANT);
        assertEquals("json", h.contentType());
        assertEquals("functions.f", h.recipient());

        h = HarmonyStreamParser.parseHeader("assistant python", null);
        assertEquals("python", h.recipient());

        h = HarmonyStreamParser.parseHeader("<|channel|>analysis to=python code", Role.ASSISTANT);
        assertEquals("python", h.recipient());
        assertEquals("code", h.contentType());

        h = HarmonyStreamParser.parseHeader("user", null);
        assertEquals(Role.USER, h.role());
        assertNull(h.channel());

        h = HarmonyStreamParser.parseHeader("assistant<|channel|> to=x", null);
        assertNotNull(h.error());
        assertEquals("x", h.recipient());

        h = HarmonyStreamParser.parseHeader("", null);
        assertEquals(Role.ASSISTANT, h.role());
        assertNotNull(h.error());

        h = HarmonyStreamParser.parseHeader("assistant a b c d", null);
        assertNotNull(h.error());
    }

    @Test
    void malformedOutputIsReportedNotThrown() {
        // header ended by <|end|> without <|message|>
        HarmonyStreamParser p = new HarmonyStreamParser(tok);
        List<HarmonyEvent> ev = p.acceptAll(tok.encodeWithSpecials("<|channel|>final<|end|>"));
        assertFalse(only(ev, Malformed.class).isEmpty());
        assertEquals("final", p.messages().getFirst().channel());
        assertNotNull(p.messages().getFirst().error());

        // text outside a message, a stray special in content, <|start|> before <|end|>, output cut off
        p = new HarmonyStreamParser(tok, null);
        ev = p.acceptAll(
                tok.encodeWithSpecials("hello<|channel|>x<|start|>assistant<|channel|>final<|message|>partial"));
        ev.addAll(p.finish());
        List<ParsedMessage> ms = p.messages();
        assertEquals(2, ms.size());
        assertEquals("hello<|channel|>x", ms.get(0).content());
        assertNotNull(ms.get(0).error());
        assertEquals("partial", ms.get(1).content());
        assertEquals(-1, ms.get(1).endToken());
        assertNotNull(ms.get(1).error());
        assertFalse(p.isDone());

        // tokens after the end of the turn, ids outside the vocabulary
        p = new HarmonyStreamParser(tok);
        p.acceptAll(tok.encodeWithSpecials("<|channel|>final<|message|>ok<|return|>"));
        ev = p.accept(tok.encode("more")[0]);
        assertFalse(only(ev, Malformed.class).isEmpty());
        assertFalse(only(p.accept(-5), Malformed.class).isEmpty());
        assertFalse(only(p.accept(O200kHarmony.VOCAB_SIZE), Malformed.class).isEmpty());
    }

    @Test
    void endlessHeaderBecomesContent() {
        HarmonyStreamParser p = new HarmonyStreamParser(tok);
        int a = tok.encode("a")[0];
        for (int i = 0; i < HarmonyStreamParser.MAX_HEADER_TOKENS + 10; i++) p.accept(a);
        assertEquals(HarmonyStreamParser.State.CONTENT, p.state());
        assertEquals(
                "a".repeat(HarmonyStreamParser.MAX_HEADER_TOKENS + 1),
                p.currentContent().substring(0, 257));
    }

    @Test
    void renderedAssistantMessagesParseBack() {
        HarmonyRenderer r = new HarmonyRenderer(tok);
        List<Message> out = List.of(
                Message.assistant("analysis", "Think: 日本 😀 <|end|> is text here."),
                Message.assistant("commentary", "Calling now."),
                Message.toolCall("get_weather", "{\"city\": \"Zürich\"}"));
        StringBuilder text = new StringBuilder();
        for (Message m : out) text.append(r.renderText(m, false));
        // the prompt already holds the first "<|start|>assistant"
        String generated = text.substring("<|start|>assistant".length());
        List<Integer> all = new ArrayList<>();
        for (Message m : out) for (int t : r.render(m, false)) all.add(t);
        int[] ids = all.stream().mapToInt(Integer::intValue).toArray();
        int[] gen = java.util.Arrays.copyOfRange(ids, 2, ids.length); // drop <|start|> and "assistant"
        assertEquals(generated, tok.decode(gen));

        HarmonyStreamParser p = new HarmonyStreamParser(tok);
        List<HarmonyEvent> ev = p.acceptAll(gen);
        assertTrue(only(ev, Malformed.class).isEmpty(), ev.toString());
        List<ParsedMessage> ms = p.messages();
        assertEquals(3, ms.size());
        for (int i = 0; i < 3; i++) assertEquals(out.get(i), ms.get(i).toMessage());
        assertEquals(O200kHarmony.CALL, p.stopToken());
        assertTrue(HarmonyStreamParser.isStopToken(p.stopToken()));
    }

    @Test
    void randomTokensNeverThrow() {
        Random rnd = new Random(1234);
        int[] specials = {
            O200kHarmony.START,
            O200kHarmony.END,
            O200kHarmony.MESSAGE,
            O200kHarmony.CHANNEL,
            O200kHarmony.CONSTRAIN,
            O200kHarmony.RETURN,
            O200kHarmony.CALL,
            200500
        };
        for (int run = 0; run < 200; run++) {
            HarmonyStreamParser p = new HarmonyStreamParser(tok, run % 2 == 0 ? Role.ASSISTANT : null);
            for (int i = 0; i < 200; i++) {
                int t = rnd.nextInt(4) == 0
                        ? specials[rnd.nextInt(specials.length)]
                        : rnd.nextInt(O200kHarmony.VOCAB_SIZE);
                assertNotNull(p.accept(t));
            }
            p.finish();
        }
    }
}
