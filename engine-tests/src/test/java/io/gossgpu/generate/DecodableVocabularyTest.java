package io.gossgpu.generate;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gossgpu.backend.Backend;
import io.gossgpu.backend.LoadedWeights;
import io.gossgpu.model.Checkpoint;
import io.gossgpu.model.ModelWeights;
import io.gossgpu.quant.Bf16;
import io.gossgpu.quant.LE;
import io.gossgpu.reference.ReferenceBackend;
import io.gossgpu.testmodel.TestModelGenerator;
import io.gossgpu.testmodel.TestModelPresets;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * A model vocabulary larger than the tokenizer's: ids the tokenizer cannot decode are never sampled. Here the last 31 of 1031 rows stand for gpt-oss's rows past 201088, made 50 times larger so that
 * unmasked sampling picks them nearly every time.
 */
class DecodableVocabularyTest {
    private static final int DECODABLE = 1000;

    @Test
    void idsPastTheTokenizerAreNeverSampled() {
        try (Checkpoint ck = new TestModelGenerator(TestModelPresets.tiny(), 31).inMemory();
                Backend backend = new ReferenceBackend()) {
            int h = ck.config().hiddenSize(), v = ck.config().vocabSize();
            MemorySegment un = ck.tensor("unembedding.weight").bytes();
            for (long i = (long) DECODABLE * h; i < (long) v * h; i++)
                un.set(LE.I16, 2 * i, Bf16.fromFloat(50 * Bf16.toFloat(un.get(LE.I16, 2 * i))));
            try (LoadedWeights w = backend.loadWeights(ModelWeights.of(ck))) {
                int[] unmasked = generate(backend, w, SamplerConfig.greedy(), false);
                assertTrue(
                        Arrays.stream(unmasked).anyMatch(t -> t >= DECODABLE),
                        "the test needs rows that win: " + Arrays.toString(unmasked));
                for (SamplerConfig s : new SamplerConfig[] {
                    SamplerConfig.greedy(),
                    SamplerConfig.of(1f, 3),
                    SamplerConfig.of(1f, 3).withTopK(40)
                }) {
                    int[] masked = generate(backend, w, s, true);
                    assertTrue(Arrays.stream(masked).allMatch(t -> t < DECODABLE), s + ": " + Arrays.toString(masked));
                }
            }
        }
    }

    private static int[] generate(Backend backend, LoadedWeights w, SamplerConfig sampler, boolean mask) {
        try (Session s = new Session(backend, w, 64)) {
            if (mask) s.decodableVocabulary(DECODABLE);
            return s.generate(new int[] {1, 2, 3}, new GenerationOptions(12, Set.of(), sampler), null)
                    .tokens();
        }
    }
}
