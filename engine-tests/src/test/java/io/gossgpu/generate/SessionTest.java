package io.gossgpu.generate;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gossgpu.GossException;
import io.gossgpu.backend.Backend;
import io.gossgpu.backend.LoadedWeights;
import io.gossgpu.model.Checkpoint;
import io.gossgpu.model.ModelWeights;
import io.gossgpu.reference.ReferenceBackend;
import io.gossgpu.testmodel.TestModelGenerator;
import io.gossgpu.testmodel.TestModelPresets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class SessionTest {
    static Checkpoint ck;
    static Backend backend;
    static LoadedWeights w;
    static final int[] PROMPT = {1, 2, 3, 500, 1000, 7};

    @BeforeAll
    static void load() {
        ck = new TestModelGenerator(TestModelPresets.tiny(), 9).inMemory();
        backend = new ReferenceBackend();
        w = backend.loadWeights(ModelWeights.of(ck));
    }

    @AfterAll
    static void close() {
        w.close();
        ck.close();
    }

    @Test
    void greedyGenerationEqualsArgmaxOfDecodedLogits() {
        int[] gen;
        try (Session s = new Session(backend, w, 30)) {
            GenerationResult r = s.generate(PROMPT, GenerationOptions.greedy(10), null);
            gen = r.tokens();
            assertEquals(GenerationResult.StopReason.MAX_TOKENS, r.stopReason());
            assertEquals(10, gen.length);
            assertEquals(9, r.timings().decodedTokens());
            assertTrue(r.timings().prefillTokensPerSecond() > 0, r.timings().toString());
        }
        try (Session s = new Session(backend, w, 30)) {
            float[] l = s.prefill(PROMPT);
            for (int i = 0; i < gen.length; i++) {
                assertEquals(Sampler.argmax(l), gen[i], "token " + i);
                l = s.decode(gen[i]);
            }
        }
    }

    @Test
    void stopTokenEndsGenerationAndIsReported() {
        int[] gen;
        try (Session s = new Session(backend, w, 30)) {
            gen = s.generate(PROMPT, GenerationOptions.greedy(10), null).tokens();
        }
        List<Integer> streamed = new ArrayList<>();
        try (Session s = new Session(backend, w, 30)) {
            GenerationResult r = s.generate(
                    PROMPT, new GenerationOptions(10, Set.of(gen[3]), SamplerConfig.greedy()), streamed::add);
            assertEquals(GenerationResult.StopReason.STOP_TOKEN, r.stopReason());
            int firstStop = 0;
            while (gen[firstStop] != gen[3]) firstStop++;
            assertEquals(firstStop + 1, r.tokens().length);
            assertEquals(r.tokens().length, streamed.size());
        }
    }

    @Test
    void seededSamplingIsReproducibleAndContextLimitsAreEnforced() {
        SamplerConfig cfg = new SamplerConfig(0.9f, 50, 0.95f, 0.01f, 1234);
        int[] a, b;
        try (Session s = new Session(backend, w, 30)) {
            a = s.generate(PROMPT, new GenerationOptions(12, Set.of(), cfg), null)
                    .tokens();
        }
        try (Session s = new Session(backend, w, 30)) {
            b = s.generate(PROMPT, new GenerationOptions(12, Set.of(), cfg), null)
                    .tokens();
        }
        assertArrayEquals(a, b);
        try (Session s = new Session(backend, w, 10)) {
            GenerationResult r = s.generate(PROMPT, GenerationOptions.greedy(20), null);
            assertEquals(GenerationResult.StopReason.CONTEXT_FULL, r.stopReason());
            assertEquals(
                    5, r.tokens().length); // positions 6..9 filled by 4 decoded tokens, the 5th sampled from position 9
        }
        try (Session s = new Session(backend, w, 4)) {
            GossException e =
                    assertThrows(GossException.class, () -> s.generate(PROMPT, GenerationOptions.greedy(1), null));
            assertTrue(e.getMessage().contains("exceeds the context length of 4"), e.getMessage());
        }
        GossException e = assertThrows(GossException.class, () -> new Session(backend, w, 1 << 30));
        assertTrue(e.getMessage().contains("does not fit"), e.getMessage());
    }
}
