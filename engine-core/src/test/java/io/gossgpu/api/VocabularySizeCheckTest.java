package io.gossgpu.api;

import io.gossgpu.model.ModelConfig;
import io.gossgpu.testmodel.TestModelPresets;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The model's vocabulary size is checked against the tokenizer's at load (issue 17, finding 3). */
class VocabularySizeCheckTest {
    @Test
    void aLargerVocabularyIsOneWarningLine() {
        assertEquals("", warnings(ModelConfig.gptOss20b()));
        String w = warnings(TestModelPresets.withOverrides(ModelConfig.gptOss20b(), null, null, 201200));
        assertEquals(1, w.lines().count(), w);
        assertTrue(w.startsWith("WARNING m has 201200 vocabulary rows") && w.contains("ids 201088 to 201199") && w.contains("never sampled"), w);
    }

    private static String warnings(ModelConfig c) {
        return String.join("\n", CapturedLog.of(() -> VocabularySizeCheck.warnIfLarger(c, Path.of("m"))));
    }
}
