package io.gossgpu.tokenizer;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class O200kHarmonyTest {
    final O200kHarmony tok = O200kHarmony.get();

    @Test
    void specialTokenIds() {
        assertEquals(201088, tok.vocabSize());
        String[][] expect = {
            {"<|startoftext|>", "199998"}, {"<|endoftext|>", "199999"}, {"<|reserved_200000|>", "200000"},
            {"<|reserved_200001|>", "200001"}, {"<|return|>", "200002"}, {"<|constrain|>", "200003"},
            {"<|reserved_200004|>", "200004"}, {"<|channel|>", "200005"}, {"<|start|>", "200006"},
            {"<|end|>", "200007"}, {"<|message|>", "200008"}, {"<|reserved_200009|>", "200009"},
            {"<|reserved_200010|>", "200010"}, {"<|reserved_200011|>", "200011"}, {"<|call|>", "200012"},
            {"<|reserved_200013|>", "200013"}, {"<|endofprompt|>", "200018"}, {"<|reserved_201087|>", "201087"}
        };
        for (String[] e : expect) {
            int id = Integer.parseInt(e[1]);
            assertEquals(id, tok.specialId(e[0]).orElseThrow(), e[0]);
            assertEquals(Optional.of(e[0]), tok.specialName(id));
            assertTrue(tok.isSpecial(id));
        }
        assertTrue(tok.specialId("<|reserved_201088|>").isEmpty());
        assertTrue(tok.specialId("<|reserved_200018|>").isEmpty());
        assertFalse(tok.isSpecial(199997));
        assertFalse(tok.isSpecial(201088));
        assertEquals(201088 - 199998, tok.specialTokens().size());
    }

    @Test
    void specialStringsAreOrdinaryTextUnlessAllowed() {
        String s = "<|start|>user<|message|>hi<|end|>";
        int[] plain = tok.encode(s);
        for (int id : plain) assertFalse(tok.isSpecial(id));
        assertEquals(s, tok.decode(plain));
        int[] special = tok.encodeWithSpecials(s);
        assertEquals(O200kHarmony.START, special[0]);
        assertEquals(O200kHarmony.END, special[special.length - 1]);
        assertEquals(s, tok.decode(special));
        assertArrayEquals(tok.encode("hello world"), tok.encodeWithSpecials("hello world"));
    }

    @Test
    void loneSurrogatesBecomeReplacementCharacter() {
        assertArrayEquals(tok.encode("a\uFFFDb"), tok.encode("a\uD800b"));
        assertArrayEquals(tok.encode("\uFFFD\uFFFD"), tok.encode("\uDC00\uD83D"));
        assertEquals("x\uD83D\uDE00", O200kHarmony.sanitize("x\uD83D\uDE00"));
        assertEquals("\uFFFDx\uFFFD", O200kHarmony.sanitize("\uDE00x\uD83D"));
        assertEquals("a\uFFFDb", tok.decode(tok.encode("a\uDFFFb")));
    }

    @Test
    void decodeRejectsIdsOutsideTheVocabulary() {
        assertThrows(IllegalArgumentException.class, () -> tok.decode(201088));
        assertThrows(IllegalArgumentException.class, () -> tok.decode(-1));
        assertEquals("<|call|>", tok.decode(O200kHarmony.CALL));
    }

    @Test
    void streamingDecoderWaitsForCompleteCharacters() {
        // A character whose bytes span several single-byte tokens.
        String text = "a😀b日本ü";
        byte[] utf8 = text.getBytes(StandardCharsets.UTF_8);
        List<Integer> ids = new ArrayList<>();
        for (byte b : utf8) ids.add(tok.rankOf(new byte[] {b}));
        StreamingDecoder d = tok.newStreamingDecoder();
        StringBuilder sb = new StringBuilder();
        List<String> pieces = new ArrayList<>();
        for (int id : ids) {
            String piece = d.accept(id);
            if (!piece.isEmpty()) pieces.add(piece);
            sb.append(piece);
        }
        assertFalse(d.hasPending());
        assertEquals(text, sb.toString());
        assertEquals(List.of("a", "😀", "b", "日", "本", "ü"), pieces);
        for (String p : pieces) assertFalse(p.contains("\uFFFD"));
    }

    @Test
    void streamingDecoderMatchesWholeDecodeOnRealTokens() {
        String text = "Grüße aus 東京 🎌🍣 — naïve café. 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 ok<|end|>";
        int[] ids = tok.encodeWithSpecials(text);
        StreamingDecoder d = tok.newStreamingDecoder();
        StringBuilder sb = new StringBuilder();
        for (int id : ids) {
            String s = d.accept(id);
            assertFalse(s.contains("\uFFFD"), "emitted a partial character");
            sb.append(s);
        }
        sb.append(d.flush());
        assertEquals(text, sb.toString());
    }

    @Test
    void streamingDecoderHandlesGarbage() {
        StreamingDecoder d = tok.newStreamingDecoder();
        assertEquals("", d.acceptBytes(new byte[] {(byte) 0xE6})); // lead of a 3-byte char: wait
        assertEquals("", d.acceptBytes(new byte[] {(byte) 0x97}));
        assertEquals("\uFFFDA", d.acceptBytes(new byte[] {'A'}).replaceAll("\uFFFD+", "\uFFFD")); // cut short
        assertEquals("\uFFFD", d.acceptBytes(new byte[] {(byte) 0x80})); // stray continuation byte
        assertEquals("\uFFFD", d.acceptBytes(new byte[] {(byte) 0xFF})); // never valid
        assertEquals("", d.acceptBytes(new byte[] {(byte) 0xF0, (byte) 0x9F}));
        assertEquals("\uFFFD", d.flush());
        assertEquals("", d.flush());
    }

    @Test
    void heapAndScanMergesAgree() {
        java.util.Random rnd = new java.util.Random(7);
        String[] units = {"a", "ab", " ", "7", "é", "日", "😀", "-", "ing", "\n", "x"};
        for (int k = 0; k < 300; k++) {
            StringBuilder sb = new StringBuilder();
            int len = 1 + rnd.nextInt(400);
            for (int i = 0; i < len; i++) sb.append(units[rnd.nextInt(rnd.nextInt(units.length) + 1)]);
            byte[] b = sb.toString().getBytes(StandardCharsets.UTF_8);
            O200kHarmony.IntBuf x = new O200kHarmony.IntBuf(8), y = new O200kHarmony.IntBuf(8);
            tok.bytePairMergeScan(b, x);
            tok.bytePairMergeHeap(b, y);
            assertArrayEquals(x.toArray(), y.toArray(), sb.toString());
        }
    }

    @Test
    void longInputsEncodeQuickly() {
        String s = " ".repeat(200000) + "x" + "7".repeat(20000) + "ab".repeat(100000) + "é".repeat(50000);
        long t0 = System.nanoTime();
        int[] ids = tok.encode(s);
        assertEquals(s, tok.decode(ids));
        assertTrue(System.nanoTime() - t0 < 10_000_000_000L, "took " + (System.nanoTime() - t0) / 1e6 + " ms");
    }

    @Test
    void ggufVocabCheck() {
        // the GPT-2 byte-level table: printable bytes map to themselves, space to U+0120 'Ġ', newline to U+010A
        assertEquals("Ġhello", GgufVocabCheck.toByteLevel(" hello".getBytes(StandardCharsets.UTF_8)));
        assertEquals("Ċ", GgufVocabCheck.toByteLevel(new byte[] {'\n'}));
        assertArrayEquals(
                new byte[] {(byte) 0xE6, (byte) 0x97, (byte) 0xA5},
                GgufVocabCheck.fromByteLevel(GgufVocabCheck.toByteLevel("日".getBytes(StandardCharsets.UTF_8)))
                        .orElseThrow());

        List<String> full = new ArrayList<>(201088);
        for (int id = 0; id < 201088; id++)
            full.add(
                    tok.isSpecial(id)
                            ? tok.specialName(id).orElseThrow()
                            : GgufVocabCheck.toByteLevel(tok.tokenBytes(id)));
        assertEquals(Optional.empty(), GgufVocabCheck.firstDisagreement(full, tok));

        List<String> swapped = new ArrayList<>(full);
        swapped.set(1000, full.get(1001));
        String msg = GgufVocabCheck.firstDisagreement(swapped, tok).orElseThrow();
        assertTrue(msg.startsWith("token 1000:"), msg);

        List<String> badSpecial = new ArrayList<>(full);
        badSpecial.set(O200kHarmony.START, "<|im_start|>");
        assertTrue(
                GgufVocabCheck.firstDisagreement(badSpecial, tok).orElseThrow().startsWith("token 200006:"));

        List<String> small = List.of("!", "\"", "#", "Ġ"); // ids 0..2 agree, id 3 is '$' in o200k
        String m = GgufVocabCheck.firstDisagreement(small, tok).orElseThrow();
        assertTrue(m.startsWith("token 3:"), m);
        assertTrue(GgufVocabCheck.firstDisagreement(List.of("!", "\"", "#"), tok)
                .orElseThrow()
                .contains("3 tokens"));
    }
}
