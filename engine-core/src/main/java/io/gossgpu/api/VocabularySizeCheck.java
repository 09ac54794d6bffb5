package io.gossgpu.api;

import io.gossgpu.model.ModelConfig;
import io.gossgpu.tokenizer.GgufVocabCheck;
import io.gossgpu.tokenizer.O200kHarmony;
import java.nio.file.Path;
import java.util.Map;

/**
 * The model's vocabulary against the o200k_harmony tokenizer's at load: rows beyond the tokenizer's ids have no
 * text, so chats and completions never sample them ({@link io.gossgpu.generate.Session#decodableVocabulary}),
 * and the user is told once. A smaller vocabulary is refused where it matters: Harmony chat needs its special
 * tokens, and a prompt may only hold ids the model has.
 */
final class VocabularySizeCheck {
    private VocabularySizeCheck() {}

    static void warnIfLarger(ModelConfig config, Path model) {
        int tokenizer = O200kHarmony.get().vocabSize();
        if (config.vocabSize() > tokenizer)
            EngineLog.LOG.log(
                    System.Logger.Level.WARNING,
                    model + " has " + config.vocabSize() + " vocabulary rows but the o200k_harmony tokenizer " + "has "
                            + tokenizer + " ids; ids " + tokenizer + " to " + (config.vocabSize() - 1)
                            + " have no text and are never sampled");
    }

    /** Warns when the token list a GGUF carries disagrees with the o200k_harmony tokenizer goss-gpu encodes with. */
    static void warnIfDifferent(Map<String, Object> metadata) {
        GgufVocabCheck.describe(metadata)
                .filter(s -> s.startsWith("DISAGREES"))
                .ifPresent(s -> EngineLog.LOG.log(System.Logger.Level.WARNING, "vocabulary " + s));
    }
}
