package io.gossgpu.cli;

import io.gossgpu.model.Checkpoint;
import io.gossgpu.tokenizer.GgufVocabCheck;
import io.gossgpu.tokenizer.O200kHarmony;

import java.util.List;
import java.util.Optional;

/** Compares the vocabulary a GGUF carries with the built-in o200k_harmony tokenizer goss-gpu encodes with. */
final class VocabularyCheck {
    static final String TOKENS_KEY = "tokenizer.ggml.tokens";

    private VocabularyCheck() {}

    /** One line about the file's own vocabulary, or empty when it carries none (safetensors, bare GGUFs). */
    static Optional<String> describe(Checkpoint ckpt) {
        if (!(ckpt.metadata().get(TOKENS_KEY) instanceof List<?> list)) return Optional.empty();
        if (!list.stream().allMatch(String.class::isInstance))
            return Optional.of("the file's " + TOKENS_KEY + " is not a list of strings; it is ignored");
        @SuppressWarnings("unchecked") List<String> tokens = (List<String>) list;
        return Optional.of(GgufVocabCheck.firstDisagreement(tokens, O200kHarmony.get())
                .map(d -> "DISAGREES with the built-in o200k_harmony tokenizer, which goss-gpu uses: " + d)
                .orElse("the file's " + tokens.size() + " tokens agree with the built-in o200k_harmony tokenizer"));
    }

    /** Warns on stderr when the model's own vocabulary disagrees with the tokenizer. */
    static void warnIfDifferent(Checkpoint ckpt) {
        describe(ckpt).filter(s -> s.startsWith("DISAGREES")).ifPresent(s -> System.err.println("goss-gpu: warning: vocabulary " + s));
    }
}
