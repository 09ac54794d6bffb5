package io.gossgpu.forward;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gossgpu.GossException;
import io.gossgpu.backend.Batch;
import io.gossgpu.backend.DeviceTensor;
import io.gossgpu.backend.ForwardingBackend;
import io.gossgpu.backend.LoadedWeights;
import io.gossgpu.generate.GenerationOptions;
import io.gossgpu.generate.Session;
import io.gossgpu.model.Checkpoint;
import io.gossgpu.model.ModelWeights;
import io.gossgpu.reference.ReferenceBackend;
import io.gossgpu.testmodel.TestModelGenerator;
import io.gossgpu.testmodel.TestModelPresets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The step contract of {@link io.gossgpu.backend.Backend} as the executor keeps it: every forward pass is
 * {@code beginStep(batch)}, the graph's ops with the result read last (none for a chunk of a prompt before its last),
 * then {@code endStep()}; a failing op still ends its step.
 */
class StepContractTest {
    /** The reference backend, logging the step boundaries and the calls between them. */
    static final class Logging extends ForwardingBackend {
        final List<String> calls = new ArrayList<>();
        boolean failAttention;

        Logging() {
            super(new ReferenceBackend());
        }

        @Override
        public void beginStep(Batch batch) {
            calls.add("begin " + batch.start(0) + "+" + batch.rows());
            super.beginStep(batch);
        }

        @Override
        public void endStep() {
            calls.add("end");
            super.endStep();
        }

        @Override
        public void embed(LoadedWeights w, int[] t, DeviceTensor out) {
            calls.add("embed");
            super.embed(w, t, out);
        }

        @Override
        public void attention(
                LoadedWeights w,
                int layer,
                DeviceTensor q,
                DeviceTensor k,
                DeviceTensor v,
                Batch batch,
                DeviceTensor out) {
            if (failAttention) throw new GossException("attention failed");
            super.attention(w, layer, q, k, v, batch, out);
        }

        @Override
        public float[] logits(LoadedWeights w, DeviceTensor x, int from) {
            calls.add("logits");
            return super.logits(w, x, from);
        }

        @Override
        public int[] argmax(LoadedWeights w, DeviceTensor x, int from) {
            calls.add("argmax");
            return super.argmax(w, x, from);
        }
    }

    @Test
    void everyForwardPassIsOneStepWithItsResultReadLast() {
        try (Checkpoint ck = new TestModelGenerator(TestModelPresets.tiny(), 3).inMemory();
                Logging b = new Logging();
                LoadedWeights w = b.loadWeights(ModelWeights.of(ck));
                Session s = new Session(b, w, 16)) {
            s.generate(new int[] {1, 2, 3}, GenerationOptions.greedy(3), null);
            assertEquals(
                    List.of(
                            "begin 0+3",
                            "embed",
                            "argmax",
                            "end",
                            "begin 3+1",
                            "embed",
                            "argmax",
                            "end",
                            "begin 4+1",
                            "embed",
                            "argmax",
                            "end"),
                    b.calls);
            b.calls.clear();
            s.maxBatch(2).reset();
            s.prefill(new int[] {4, 5, 6});
            assertEquals(
                    List.of("begin 0+2", "embed", "end", "begin 2+1", "embed", "logits", "end"),
                    b.calls,
                    "a prefill split into chunks: one step per chunk, a result read only in the last");
        }
    }

    @Test
    void aFailingOpStillEndsItsStep() {
        try (Checkpoint ck = new TestModelGenerator(TestModelPresets.tiny(), 3).inMemory();
                Logging b = new Logging();
                LoadedWeights w = b.loadWeights(ModelWeights.of(ck));
                Session s = new Session(b, w, 16)) {
            int vocab = w.config().vocabSize();
            assertThrows(GossException.class, () -> s.prefill(new int[] {1, vocab}));
            assertEquals(List.of(), b.calls, "a token outside the vocabulary is refused before any step");
            b.failAttention = true;
            assertThrows(GossException.class, () -> s.prefill(new int[] {1, 2}));
            assertEquals(List.of("begin 0+2", "embed", "end"), b.calls);
            b.failAttention = false;
            assertTrue(s.prefill(new int[] {1, 2}).length == vocab, "the backend is usable after the failed step");
        }
    }
}
