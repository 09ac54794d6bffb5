package io.gossgpu.api;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.gossgpu.backend.Backends;
import io.gossgpu.backend.DeviceTensor;
import io.gossgpu.backend.ForwardingBackend;
import io.gossgpu.backend.LoadedWeights;
import io.gossgpu.testmodel.SafetensorsWriter;
import io.gossgpu.testmodel.TestModelPresets;
import io.gossgpu.tokenizer.O200kHarmony;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.Deque;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A random-weight model never writes well-formed Harmony, so this test scripts the greedy choices
 * (the reference computes every step; only argmax is replaced) to make the model answer properly:
 * then the next turn must prefill only the new tokens, and reply exactly as a fresh chat would.
 */
class ChatCacheReuseTest {
    @TempDir
    Path dir;

    /**
     * The reference backend whose argmax returns scripted tokens, then falls back to the real argmax; a {@link #FREE}
     * entry in the script keeps the real argmax for that step (so the step depends on the logits).
     */
    static final class Scripted extends ForwardingBackend {
        static final int FREE = -1;
        final Deque<Integer> script = new ArrayDeque<>();

        Scripted() {
            super(Backends.open("reference", io.gossgpu.backend.BackendOptions.defaults()));
        }

        @Override
        public int[] argmax(LoadedWeights w, DeviceTensor x, int fromRow) {
            int[] real = super.argmax(w, x, fromRow);
            if (!script.isEmpty()) {
                int t = script.poll();
                if (t != FREE) real[real.length - 1] = t;
            }
            return real;
        }
    }

    @Test
    void secondTurnPrefillsOnlyWhatWasAdded() {
        Path model = SafetensorsWriter.writeOriginalIn(dir, TestModelPresets.twoLayerDemo(), 9);
        O200kHarmony tok = O200kHarmony.get();
        ChatOptions options =
                ChatOptions.defaults().withMaxTokens(20).withContextLength(512).withSampling(Sampling.greedy());
        Scripted scripted = new Scripted();
        try (Engine engine = Engine.open(EngineOptions.of(model), () -> scripted);
                Chat chat = engine.newChat(options)) {
            for (int t : tok.encodeWithSpecials("<|channel|>final<|message|>Hello there.<|return|>"))
                scripted.script.add(t);
            Reply first = chat.send("Hi", null);
            assertEquals("Hello there.", first.content());
            int firstPrompt = chat.lastPrefillTokens();

            Reply second = chat.send("Tell me more", null);
            int expectedNew = tok.encodeWithSpecials(
                            "<|end|><|start|>user<|message|>Tell me more<|end|><|start|>assistant")
                    .length;
            assertEquals(expectedNew, chat.lastPrefillTokens(), "first prompt was " + firstPrompt + " tokens");

            // A fresh chat given the same history computes everything from scratch and must agree.
            try (Chat fresh = engine.newChat(options)) {
                for (int t : tok.encodeWithSpecials("<|channel|>final<|message|>Hello there.<|return|>"))
                    scripted.script.add(t);
                fresh.send("Hi", null);
                fresh.forgetCache();
                Reply again = fresh.send("Tell me more", null);
                assertEquals(
                        firstPrompt + expectedNew + tok.encode("Hello there.").length + 3, fresh.lastPrefillTokens());
                assertEquals(java.util.Arrays.toString(second.tokens()), java.util.Arrays.toString(again.tokens()));
            }
        }
    }
}
