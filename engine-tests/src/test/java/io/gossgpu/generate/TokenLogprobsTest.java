package io.gossgpu.generate;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

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
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** Log probabilities of generated tokens: the arithmetic, and a generation asking for them choosing the same tokens. */
class TokenLogprobsTest {
    @Test
    void logSoftmaxAndTopKAgainstAPlainComputation() {
        SplittableRandom rnd = new SplittableRandom(3);
        float[] logits = new float[1031];
        for (int i = 0; i < logits.length; i++) logits[i] = (float) (rnd.nextGaussian() * 4);
        logits[17] = logits[900] = 30f; // a tie at the top: the lower id first
        TokenLogprobs lp = TokenLogprobs.of(logits, 42, 5);
        double z = 0;
        for (float l : logits) z += Math.exp(l);
        assertEquals(logits[42] - Math.log(z), lp.logprob(), 1e-4);
        Integer[] order = new Integer[logits.length];
        for (int i = 0; i < order.length; i++) order[i] = i;
        java.util.Arrays.sort(
                order, (a, b) -> logits[a] != logits[b] ? Float.compare(logits[b], logits[a]) : Integer.compare(a, b));
        for (int k = 0; k < 5; k++) {
            assertEquals(order[k], lp.topTokens()[k], "rank " + k);
            assertEquals(logits[order[k]] - Math.log(z), lp.topLogprobs()[k], 1e-4);
        }
        assertEquals(17, lp.topTokens()[0]);
        assertEquals(900, lp.topTokens()[1]);
        assertEquals(0, TokenLogprobs.of(logits, 1, 0).topTokens().length);
        assertThrows(IllegalArgumentException.class, () -> TokenLogprobs.of(logits, 1, 21));
    }

    @Test
    void askingForLogprobsChangesNoToken() {
        try (Checkpoint ck = new TestModelGenerator(TestModelPresets.tiny(), 9).inMemory()) {
            Backend backend = new ReferenceBackend();
            try (LoadedWeights w = backend.loadWeights(ModelWeights.of(ck))) {
                int[] prompt = {1, 2, 3, 500, 1000, 7};
                for (SamplerConfig sampler : List.of(SamplerConfig.greedy(), new SamplerConfig(0.8f, 0, 1, 0, 77))) {
                    int[] plain, withLogprobs;
                    List<TokenLogprobs> seen = new ArrayList<>();
                    try (Session s = new Session(backend, w, 40)) {
                        plain = s.generate(prompt, new GenerationOptions(12, Set.of(), sampler), null)
                                .tokens();
                    }
                    try (Session s = new Session(backend, w, 40)) {
                        withLogprobs = s.generate(
                                        prompt, new GenerationOptions(12, Set.of(), sampler, 3), null, seen::add)
                                .tokens();
                    }
                    assertArrayEquals(plain, withLogprobs, sampler.toString());
                    assertEquals(plain.length, seen.size());
                    for (int i = 0; i < plain.length; i++) {
                        assertEquals(plain[i], seen.get(i).token());
                        assertEquals(3, seen.get(i).topTokens().length);
                        if (sampler.isGreedy())
                            assertEquals(plain[i], seen.get(i).topTokens()[0], "greedy picks the most likely");
                    }
                }
            }
        }
    }
}
