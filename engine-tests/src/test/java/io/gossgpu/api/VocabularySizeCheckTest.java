package io.gossgpu.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gossgpu.model.ModelConfig;
import io.gossgpu.testmodel.GgufWriter;
import io.gossgpu.testmodel.TestModelGenerator;
import io.gossgpu.testmodel.TestModelPresets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The model's vocabulary size is checked against the tokenizer's at load. */
class VocabularySizeCheckTest {
    @Test
    void aLargerVocabularyIsOneWarningLine() {
        assertEquals("", warnings(ModelConfig.gptOss20b()));
        String w = warnings(TestModelPresets.withOverrides(ModelConfig.gptOss20b(), null, null, 201200));
        assertEquals(1, w.lines().count(), w);
        assertTrue(
                w.startsWith("WARNING m has 201200 vocabulary rows")
                        && w.contains("ids 201088 to 201199")
                        && w.contains("never sampled"),
                w);
    }

    /**
     * A GGUF whose own token list disagrees with the o200k_harmony tokenizer is one warning when the engine opens it
     * (the engine says so on its System.Logger, where the command line used to print it itself).
     */
    @Test
    void aGgufVocabularyThatDisagreesIsOneWarningWhenTheEngineOpens(@TempDir Path dir) {
        ModelConfig c = TestModelPresets.tiny();
        List<String> tokens = new ArrayList<>();
        for (int i = 0; i < c.vocabSize(); i++) tokens.add("tok" + i);
        Path wrong = dir.resolve("wrong.gguf"), none = dir.resolve("none.gguf");
        GgufWriter.write(
                new TestModelGenerator(c, 2),
                wrong,
                GgufWriter.Options.defaults().withTokens(tokens));
        GgufWriter.write(new TestModelGenerator(c, 2), none, GgufWriter.Options.defaults());
        List<String> logged = CapturedLog.of(() ->
                Engine.open(EngineOptions.of(wrong).withBackend("reference")).close());
        List<String> vocabulary =
                logged.stream().filter(l -> l.contains("vocabulary DISAGREES")).toList();
        assertEquals(1, vocabulary.size(), logged.toString());
        assertTrue(
                vocabulary
                        .getFirst()
                        .startsWith("WARNING vocabulary DISAGREES with the built-in o200k_harmony tokenizer"),
                vocabulary.getFirst());
        assertTrue(
                CapturedLog.of(() -> Engine.open(EngineOptions.of(none).withBackend("reference"))
                                .close())
                        .stream()
                        .noneMatch(l -> l.contains("vocabulary DISAGREES")),
                "a GGUF without a token list says nothing");
    }

    private static String warnings(ModelConfig c) {
        return String.join("\n", CapturedLog.of(() -> VocabularySizeCheck.warnIfLarger(c, Path.of("m"))));
    }
}
