package io.gossgpu.cuda;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gossgpu.backend.Backend;
import io.gossgpu.backend.BackendProvider;
import io.gossgpu.backend.Batch;
import io.gossgpu.backend.LoadedWeights;
import io.gossgpu.conformance.BackendConformanceKit;
import io.gossgpu.forward.Executor;
import io.gossgpu.generate.Session;
import io.gossgpu.model.Checkpoint;
import io.gossgpu.model.ModelConfig;
import io.gossgpu.model.ModelWeights;
import io.gossgpu.testmodel.TestModelGenerator;
import java.util.ArrayList;
import java.util.List;
import java.util.SortedMap;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Decode steps as CUDA graphs: a greedy decode of 36 steps (logits output, then argmax, then logits again)
 * with graphs on gives bit-for-bit the logits and ids of the same decode with graphs off, matches the
 * reference backend, and really ran as graphs (two captures, one per output mode, and one graph launch
 * per step). Skipped like {@link CudaConformanceTest} when the backend is unavailable.
 */
class CudaGraphDecodeTest extends CudaAgainstReference {
    static final int PROMPT = 5, STEPS = 36;
    /** Small (2 layers, hidden 64, window 3 < the positions decoded) so that it is quick under the CUDA emulator too. */
    static final ModelConfig SMALL =
            new ModelConfig(2, 4, 2, 50, 64, 32, 7.0f, 8, 4, 2, 3, 4096, 150000f, 32f, 1f, 32f, 1e-5f);

    /** Output mode of decode step {@code i}: logits, then argmax, then logits again (a cached graph comes back). */
    static Executor.Output mode(int i) {
        return i < 12 || i >= 24 ? Executor.Output.LAST_LOGITS : Executor.Output.LAST_ARGMAX;
    }

    /** What one decode run returned: logits per step (null on argmax steps), the token chosen at each step, and the launch counts. */
    record Run(List<float[]> logits, int[] inputs, int[] tokens, SortedMap<String, Long> stats) {}

    static Run decode(Backend b, ModelWeights weights, int[] prompt, int[] forced) {
        List<float[]> logits = new ArrayList<>();
        int[] tokens = new int[STEPS], inputs = new int[STEPS];
        try (LoadedWeights w = b.loadWeights(weights);
                Session s = new Session(b, w, PROMPT + STEPS + 3)) {
            int token = argmax(s.forward(prompt, Executor.Output.LAST_LOGITS).logits());
            for (int i = 0; i < STEPS; i++) {
                int in = forced != null ? forced[i] : token;
                inputs[i] = in;
                Executor.Result r = s.forward(new int[] {in}, mode(i));
                logits.add(r.logits());
                token = r.logits() != null ? argmax(r.logits()) : r.argmax()[0];
                tokens[i] = token;
            }
        }
        return new Run(logits, inputs, tokens, b.counters());
    }

    static int argmax(float[] l) {
        int best = 0;
        for (int i = 1; i < l.length; i++) {
            if (l[i] > l[best]) {
                best = i;
            }
        }
        return best;
    }

    static Run cuda(BackendProvider p, String graph, ModelWeights w, int[] prompt) {
        try (Backend b = p.create(graphs(graph))) {
            return decode(b, w, prompt, null);
        }
    }

    static io.gossgpu.backend.BackendOptions graphs(String onOrOff) {
        return io.gossgpu.backend.BackendOptions.defaults().with(CudaKnobs.GRAPH.envName(), onOrOff);
    }

    /** The prompt every decode of {@link #SMALL} here starts from. */
    static int[] prompt() {
        return new SplittableRandom(8).ints(PROMPT, 0, SMALL.vocabSize()).toArray();
    }

    /**
     * A decode with graphs gives the tokens and logits of the same decode launched kernel by kernel, bit for bit, and
     * the reference's: its logits within the kit's model tolerance, its argmax steps' tokens.
     */
    static void assertGraphsMatch(Run graphs, Run eager, Run ref, String what) {
        assertArrayEquals(eager.tokens(), graphs.tokens(), "greedy tokens, graphs on vs off" + what);
        for (int i = 0; i < STEPS; i++) {
            if (mode(i) == Executor.Output.LAST_LOGITS) {
                assertArrayEquals(
                        eager.logits().get(i),
                        graphs.logits().get(i),
                        "logits of step " + i + ", graphs on vs off (bit for bit)" + what);
                BackendConformanceKit.assertClose(
                        "logits of decode step " + i + what,
                        ref.logits().get(i),
                        graphs.logits().get(i),
                        1,
                        SMALL.vocabSize(),
                        1e-3);
            } else {
                // SMALL's logits are spread wide: no near-ties
                assertEquals(ref.tokens()[i], graphs.tokens()[i], "argmax of decode step " + i + what);
            }
        }
    }

    @Test
    void greedyDecodeAsGraphsEqualsEagerLaunchesAndTheReference() {
        try (Checkpoint ck = new TestModelGenerator(SMALL, 31).inMemory()) {
            ModelWeights w = ModelWeights.of(ck);
            int[] prompt = prompt();
            Run graphs = cuda(provider, "1", w, prompt);
            Run eager = cuda(provider, "0", w, prompt);

            assertEquals(
                    2,
                    graphs.stats().get("graph_captures"),
                    "one capture per output mode (logits, argmax); back to logits reuses the first: " + graphs.stats());
            assertEquals(
                    STEPS,
                    graphs.stats().get("graph_launches"),
                    "every decode step one graph launch: " + graphs.stats());
            assertEquals(
                    0,
                    eager.stats().get("graph_captures") + eager.stats().get("graph_launches"),
                    "GOSS_CUDA_GRAPH=0: " + eager.stats());
            assertTrue(
                    eager.stats().get("kernel_launches") > 10 * graphs.stats().get("kernel_launches"),
                    "graphs launch only the prefill's kernels one by one: " + graphs.stats() + " vs " + eager.stats());
            assertGraphsMatch(graphs, eager, decode(reference, w, prompt, graphs.inputs()), "");
        }
    }

    /**
     * Decode steps of several sequences (continuous batching) are graphs too, one per batch shape: after a first step of
     * all three (which sizes the scratch buffers for three rows), two sequences side by side for 12 steps, the third
     * joining for 12, then the first two again for 12 take two captures and 36 graph launches, and give the ids of the
     * same steps launched one kernel at a time.
     */
    @Test
    void batchedDecodeStepsRunAsOneGraphPerBatchShape() {
        ModelConfig c = SMALL;
        try (Checkpoint ck = new TestModelGenerator(c, 32).inMemory()) {
            ModelWeights w = ModelWeights.of(ck);
            int[][] on = batched(provider, "1", w, c), off = batched(provider, "0", w, c);
            for (int i = 0; i < on.length; i++)
                assertArrayEquals(off[i], on[i], "ids of sequence " + i + ", graphs on vs off");
        }
    }

    /** The ids each of three sequences decodes in the steps of {@link #batchedDecodeStepsRunAsOneGraphPerBatchShape}. */
    private static int[][] batched(BackendProvider p, String graph, ModelWeights weights, ModelConfig c) {
        int n = 3;
        int[][] ids = new int[n][37];
        int[] count = new int[n], pos = new int[n], token = new int[n];
        try (CudaBackend b = (CudaBackend) p.create(graphs(graph));
                LoadedWeights w = b.loadWeights(weights);
                Executor ex = new Executor(b, w)) {
            io.gossgpu.backend.KvCache[] caches = new io.gossgpu.backend.KvCache[n];
            try {
                for (int i = 0; i < n; i++) {
                    caches[i] = b.createKvCache(new io.gossgpu.backend.KvCacheSpec(c, 48));
                    int[] prompt = new SplittableRandom(40 + i)
                            .ints(3 + i, 0, c.vocabSize())
                            .toArray();
                    token[i] = ex.forward(prompt, 0, caches[i], Executor.Output.LAST_ARGMAX)
                            .argmax()[0];
                    pos[i] = prompt.length;
                }
                SortedMap<String, Long> before = null;
                for (int step = -1; step < 36; step++) {
                    if (step == 0) before = b.counters();
                    int seqs = step >= 12 && step < 24 || step < 0 ? 3 : 2;
                    List<Executor.Request> rq = new ArrayList<>();
                    for (int i = 0; i < seqs; i++)
                        rq.add(new Executor.Request(
                                new int[] {token[i]}, caches[i], pos[i], Executor.Output.LAST_ARGMAX));
                    Executor.Result[] r = ex.step(rq);
                    for (int i = 0; i < seqs; i++) {
                        token[i] = r[i].argmax()[0];
                        ids[i][count[i]++] = token[i];
                        pos[i]++;
                    }
                }
                SortedMap<String, Long> after = b.counters();
                if (graph.equals("1")) {
                    assertEquals(
                            2,
                            after.get("graph_captures") - before.get("graph_captures"),
                            "one capture per batch shape (2 and 3 sequences): " + after);
                    assertEquals(
                            36,
                            after.get("graph_launches") - before.get("graph_launches"),
                            "every step one graph launch: " + after);
                }
            } finally {
                for (var k : caches) if (k != null) k.close();
            }
        }
        return ids;
    }

    /** Only a step (the executor's {@code beginStep} of one token) is recorded: the same ops called outside one launch directly. */
    @Test
    void opsOutsideAStepAreNotRecorded() {
        ModelConfig c = SMALL;
        try (Checkpoint ck = new TestModelGenerator(c, 31).inMemory();
                CudaBackend b = (CudaBackend) provider.create(graphs("1"));
                LoadedWeights w = b.loadWeights(ModelWeights.of(ck));
                var x = b.allocate(1, c.hiddenSize());
                var cache = b.createKvCache(new io.gossgpu.backend.KvCacheSpec(c, 4))) {
            b.embed(w, new int[] {3}, x);
            int eager = b.argmax(w, x, 0)[0];
            assertEquals(
                    0,
                    b.counters().get("graph_captures") + b.counters().get("graph_launches"),
                    "outside a step: " + b.counters());
            b.beginStep(Batch.of(cache, 0, 1));
            b.embed(w, new int[] {3}, x);
            assertEquals(eager, b.argmax(w, x, 0)[0]);
            b.endStep();
            assertEquals(1, b.counters().get("graph_captures"), "the step ran as a graph: " + b.counters());
            assertEquals(1, b.counters().get("graph_launches"), "the step ran as a graph: " + b.counters());
        }
    }

    /**
     * Temperature decoding samples on the device inside the recorded step: 40 tokens (one prefill, 39 decode
     * steps) take one capture and one graph launch per step (the temperature and draw change every step but
     * live in the device layer's draws buffer), give the tokens of the same generation with graphs off, and those of the
     * host sampler over the eager logits with the same seed.
     */
    @Test
    void sampledDecodeReplaysOneGraph() {
        ModelConfig c = SMALL;
        io.gossgpu.generate.SamplerConfig sc = io.gossgpu.generate.SamplerConfig.of(1f, 99);
        var options = new io.gossgpu.generate.GenerationOptions(40, java.util.Set.of(), sc);
        try (Checkpoint ck = new TestModelGenerator(c, 31).inMemory()) {
            ModelWeights w = ModelWeights.of(ck);
            int[] prompt = prompt();
            int[][] tokens = new int[2][];
            SortedMap<String, Long> stats = null;
            for (String graph : new String[] {"1", "0"}) {
                try (Backend b = provider.create(graphs(graph));
                        LoadedWeights lw = b.loadWeights(w);
                        Session s = new Session(b, lw, 64)) {
                    tokens[graph.equals("1") ? 0 : 1] =
                            s.generate(prompt, options, null).tokens();
                    if (graph.equals("1")) {
                        stats = ((CudaBackend) b).counters();
                    }
                    if (graph.equals("0")) {
                        s.reset();
                        io.gossgpu.generate.Sampler host = new io.gossgpu.generate.Sampler(sc);
                        float[] logits = s.prefill(prompt);
                        int[] want = new int[40];
                        for (int i = 0; i < 40; i++) {
                            want[i] = host.sample(logits);
                            if (i < 39) {
                                logits = s.decode(want[i]);
                            }
                        }
                        assertArrayEquals(
                                want, tokens[1], "device sampling vs the host sampler over the same backend's logits");
                    }
                }
            }
            assertEquals(40, tokens[0].length);
            assertArrayEquals(tokens[1], tokens[0], "sampled tokens, graphs on vs off");
            assertEquals(1, stats.get("graph_captures"), "one capture for every sampled decode step: " + stats);
            assertEquals(39, stats.get("graph_launches"), "every decode step one graph launch: " + stats);
        }
    }
}
