package io.gossgpu.tokenizer;

import static org.junit.jupiter.api.Assertions.*;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Token-for-token parity with OpenAI's tiktoken on the fixture made by tokenizer/make-parity-fixture.mjs. */
class TiktokenParityTest {

    record Case(int line, String mode, String text, int[] ids) {}

    static List<Case> load() throws Exception {
        ObjectMapper om = new ObjectMapper();
        List<Case> cases = new ArrayList<>();
        try (var in = TiktokenParityTest.class.getResourceAsStream("/tokenizer/parity.jsonl")) {
            assertNotNull(in, "fixture tokenizer/parity.jsonl missing");
            BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
            String line;
            int no = 0;
            while ((line = r.readLine()) != null) {
                no++;
                JsonNode n = om.readTree(line);
                JsonNode ids = n.get("ids");
                int[] a = new int[ids.size()];
                for (int i = 0; i < a.length; i++) a[i] = ids.get(i).asInt();
                cases.add(new Case(no, n.get("mode").asText(), n.get("text").asText(), a));
            }
        }
        return cases;
    }

    @Test
    void encodingMatchesTiktoken() throws Exception {
        O200kHarmony tok = O200kHarmony.get();
        List<Case> cases = load();
        assertTrue(cases.size() > 3000, "fixture has " + cases.size() + " cases");
        List<String> failures = new ArrayList<>();
        for (Case c : cases) {
            int[] got = c.mode().equals("specials") ? tok.encodeWithSpecials(c.text()) : tok.encode(c.text());
            if (!Arrays.equals(got, c.ids())) {
                failures.add("line " + c.line() + " (" + c.mode() + ") " + escape(c.text()) + "\n  expected "
                        + Arrays.toString(c.ids()) + "\n  got      " + Arrays.toString(got));
            }
        }
        assertTrue(
                failures.isEmpty(),
                failures.size() + " of " + cases.size() + " differ; first ones:\n"
                        + String.join("\n", failures.subList(0, Math.min(5, failures.size()))));
    }

    @Test
    void wholeVocabularyMatchesTiktoken() throws Exception {
        O200kHarmony tok = O200kHarmony.get();
        java.security.MessageDigest md = java.security.MessageDigest.getInstance("SHA-256");
        for (int id = 0; id < O200kHarmony.NUM_RANKS; id++) {
            byte[] b = tok.tokenBytes(id);
            md.update(new byte[] {(byte) (b.length >> 8), (byte) b.length});
            md.update(b);
        }
        String got = java.util.HexFormat.of().formatHex(md.digest());
        String want;
        try (var in = TiktokenParityTest.class.getResourceAsStream("/tokenizer/vocab-sha256.txt")) {
            want = new String(in.readAllBytes(), StandardCharsets.US_ASCII).strip();
        }
        assertEquals(want, got, "o200k_base token bytes differ from tiktoken's");
        for (int id = 0; id < O200kHarmony.NUM_RANKS; id += 997) assertEquals(id, tok.rankOf(tok.tokenBytes(id)));
    }

    @Test
    void decodingRoundTripsTheFixture() throws Exception {
        O200kHarmony tok = O200kHarmony.get();
        for (Case c : load()) {
            String want = O200kHarmony.sanitize(c.text());
            assertEquals(want, tok.decode(c.ids()), "line " + c.line());
        }
    }

    static String escape(String s) {
        StringBuilder sb = new StringBuilder();
        for (char ch : (s.length() > 200 ? s.substring(0, 200) + "..." : s).toCharArray()) {
            if (ch < 0x20 || ch > 0x7e) sb.append(String.format("\\u%04x", (int) ch));
            else sb.append(ch);
        }
        return sb.toString();
    }
}
