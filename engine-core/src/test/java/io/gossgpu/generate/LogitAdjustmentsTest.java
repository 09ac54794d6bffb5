package io.gossgpu.generate;

import static org.junit.jupiter.api.Assertions.*;

import io.gossgpu.GossException;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** OpenAI's logit bias and presence/frequency penalties against probabilities worked out by hand. */
class LogitAdjustmentsTest {
    @Test
    void penaltiesAndBiasGiveTheHandComputedDistribution() {
        float[] logits = {1f, 2f, 3f, 0f};
        // token 2 generated twice, token 0 once; presence 0.5, frequency 0.25; token 3 biased +1.5
        Map<Integer, Integer> counts = LogitAdjustments.newCounts();
        LogitAdjustments.count(counts, 2);
        LogitAdjustments.count(counts, 0);
        LogitAdjustments.count(counts, 2);
        new LogitAdjustments(Map.of(3, 1.5f), 0.5f, 0.25f).apply(logits, counts);
        // by hand: 1 − (1·0.25 + 0.5) = 0.25;  2 (never generated);  3 − (2·0.25 + 0.5) = 2;  0 + 1.5 = 1.5
        assertArrayEquals(new float[] {0.25f, 2f, 2f, 1.5f}, logits, 0f);
        // softmax at temperature 1: e^0.25, e^2, e^2, e^1.5 over their sum (1.2840254 + 7.3890561 + 7.3890561 +
        // 4.4816891 = 20.5438267)
        double[] p = new Sampler(SamplerConfig.of(1f, 1)).probabilities(logits);
        double[] expected = {
            1.2840254 / 20.5438267, 7.3890561 / 20.5438267, 7.3890561 / 20.5438267, 4.4816891 / 20.5438267
        };
        assertArrayEquals(expected, p, 1e-6);
    }

    @Test
    void aBiasOfMinus100RulesATokenOutAndPlus100ForcesIt() {
        float[] logits = {5f, 1f, 0f};
        new LogitAdjustments(Map.of(0, -100f, 2, 100f), 0, 0).apply(logits, LogitAdjustments.newCounts());
        double[] p = new Sampler(SamplerConfig.of(1f, 1)).probabilities(logits);
        assertEquals(1.0, p[2], 1e-12);
        assertTrue(p[0] < 1e-40);
    }

    @Test
    void outOfRangeValuesAreRefused() {
        assertThrows(GossException.class, () -> new LogitAdjustments(Map.of(1, 101f), 0, 0));
        assertThrows(GossException.class, () -> new LogitAdjustments(Map.of(), 2.5f, 0));
        assertThrows(GossException.class, () -> new LogitAdjustments(Map.of(), 0, -2.5f));
        assertTrue(new LogitAdjustments(Map.of(), 0, 0).isNone());
    }
}
