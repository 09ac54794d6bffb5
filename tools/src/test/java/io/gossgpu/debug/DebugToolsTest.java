package io.gossgpu.debug;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.gossgpu.backend.LoadedWeights;
import io.gossgpu.conformance.BrokenNormBackend;
import io.gossgpu.forward.OpKind;
import io.gossgpu.model.Checkpoint;
import io.gossgpu.model.ModelWeights;
import io.gossgpu.reference.ReferenceBackend;
import io.gossgpu.testmodel.TestModelGenerator;
import io.gossgpu.testmodel.TestModelPresets;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DebugToolsTest {
    static final int[] TOKENS = {5, 900, 17, 3, 3, 1030, 44, 0, 812, 77};

    @Test
    void referenceAgainstItselfHasNoDivergence() {
        try (Checkpoint ck = new TestModelGenerator(TestModelPresets.tiny(), 5).inMemory()) {
            ModelWeights w = ModelWeights.of(ck);
            assertEquals(
                    Optional.empty(), Verifier.compare(w, new ReferenceBackend(), new ReferenceBackend(), TOKENS, 0));
        }
    }

    @Test
    void aBrokenOpIsNamedWithLayerAndPosition() {
        try (Checkpoint ck = new TestModelGenerator(TestModelPresets.tiny(), 5).inMemory()) {
            ModelWeights w = ModelWeights.of(ck);
            Verifier.Divergence d = Verifier.compare(w, new BrokenNormBackend(), new ReferenceBackend(), TOKENS, 1e-4)
                    .orElseThrow();
            assertEquals(OpKind.MLP_NORM, d.op().kind());
            assertEquals(1, d.op().layer());
            assertEquals(0, d.position());
            assertEquals(7, d.index());
            assertEquals(d.expected() * 1.01f, d.actual(), 1e-6);
            assertTrue(d.toString().contains("MLP_NORM[layer 1]"), d.toString());
        }
    }

    @Test
    void logitsDumpWritesRowMajorLittleEndianAndTop5(@TempDir Path dir) throws Exception {
        try (Checkpoint ck = new TestModelGenerator(TestModelPresets.tiny(), 5).inMemory()) {
            ModelWeights w = ModelWeights.of(ck);
            ReferenceBackend b = new ReferenceBackend();
            float[] logits;
            try (LoadedWeights lw = b.loadWeights(w)) {
                logits = LogitsDump.write(dir, b, lw, TOKENS);
            }
            int vocab = TestModelPresets.tiny().vocabSize();
            byte[] bytes = Files.readAllBytes(dir.resolve("logits.f32"));
            assertEquals(TOKENS.length * vocab * 4, bytes.length);
            ByteBuffer buf = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
            assertEquals(logits[3 * vocab + 10], buf.getFloat((3 * vocab + 10) * 4));
            JsonNode json =
                    new ObjectMapper().readTree(dir.resolve("logits.json").toFile());
            assertEquals(TOKENS.length, json.get("shape").get(0).asInt());
            assertEquals(vocab, json.get("shape").get(1).asInt());
            assertEquals("reference", json.get("backend").asText());
            assertEquals(900, json.get("tokens").get(1).asInt());
            JsonNode top = json.get("top5").get(4);
            assertEquals(5, top.size());
            int best = top.get(0).get("id").asInt();
            for (int v = 0; v < vocab; v++) assertTrue(logits[4 * vocab + v] <= logits[4 * vocab + best]);
            assertTrue(top.get(0).get("logit").asDouble()
                    >= top.get(1).get("logit").asDouble());
        }
    }
}
