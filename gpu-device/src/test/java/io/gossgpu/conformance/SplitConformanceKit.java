package io.gossgpu.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gossgpu.GossException;
import io.gossgpu.backend.Availability;
import io.gossgpu.backend.Backend;
import io.gossgpu.backend.BackendOptions;
import io.gossgpu.backend.BackendProvider;
import io.gossgpu.backend.DeviceRouting;
import io.gossgpu.backend.KvCache;
import io.gossgpu.backend.KvCacheSpec;
import io.gossgpu.backend.LoadedWeights;
import io.gossgpu.backend.Routing;
import io.gossgpu.cpu.CpuBackendProvider;
import io.gossgpu.cpu.matmul.KernelSet;
import io.gossgpu.device.ExpertPlan;
import io.gossgpu.device.SplitBackend;
import io.gossgpu.forward.Executor;
import io.gossgpu.generate.GenerationOptions;
import io.gossgpu.generate.SamplerConfig;
import io.gossgpu.generate.Session;
import io.gossgpu.model.Checkpoint;
import io.gossgpu.model.ModelConfig;
import io.gossgpu.model.ModelWeights;
import io.gossgpu.testmodel.TestModelGenerator;
import io.gossgpu.testmodel.TestModelPresets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.function.IntFunction;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * The conformance kit on a split model: a GPU backend ({@link #gpu()}) running everything but the MoE experts of the
 * layers {@link #placement()} puts on the CPU, which the cpu backend runs on its Java float kernels (so the kit's float
 * tolerances hold), through {@link SplitBackend}. Every op and whole-model test of the kit runs against the reference.
 * A GPU module adds one class per placement:
 *
 * <pre>{@code
 * class OpenClSplitEveryOtherConformanceTest extends SplitConformanceKit {
 *     protected BackendProvider gpu() { return new OpenClBackendProvider(); }
 *     protected Placement placement() { return Placement.EVERY_OTHER; }
 * }
 * }</pre>
 */
public abstract class SplitConformanceKit extends BackendConformanceKit {
    /** The placements the kit runs: every layer's experts on the CPU, layers 0, 2, 4 … on the CPU, only the last layer's. */
    public enum Placement {
        ALL_ON_CPU(ExpertPlan::allOnCpu),
        EVERY_OTHER(n -> ExpertPlan.layersOnCpu(
                n, IntStream.range(0, n).filter(l -> l % 2 == 0).toArray())),
        LAST_ONLY(n -> ExpertPlan.layersOnCpu(n, n - 1));

        final IntFunction<ExpertPlan> plan;

        Placement(IntFunction<ExpertPlan> plan) {
            this.plan = plan;
        }
    }

    /** The GPU backend under test. */
    protected abstract BackendProvider gpu();

    protected abstract Placement placement();

    /**
     * Steps of at least this many tokens stream a CPU layer's experts to the GPU ({@link SplitBackend}); 0 (the default)
     * never streams. A class that returns 2 runs every prefill chunk's and op test's MoE of the CPU layers on the GPU from
     * the streamed experts, and every decode step's on the CPU.
     */
    protected int streamMinTokens() {
        return 0;
    }

    @Override
    protected final BackendProvider provider() {
        BackendProvider gpu = gpu();
        return new BackendProvider() {
            @Override
            public String name() {
                return gpu.name();
            }

            @Override
            public int priority() {
                return gpu.priority();
            }

            @Override
            public Availability availability() {
                return gpu.availability();
            }

            @Override
            public Backend create(BackendOptions options) {
                return new SplitBackend(
                        gpu.create(options),
                        CpuBackendProvider.withKernels(KernelSet.Isa.JAVA).create(options),
                        placement().plan,
                        streamMinTokens());
            }
        };
    }

    /** The kit's ops reach the cpu backend on the CPU's layers: the MoE of each such layer runs there and matches the reference. */
    @Test
    void moeOfCpuLayersRunsOnTheCpu() {
        for (String shape : new String[] {"tiny", "odd", "wide"}) {
            Model m = model(shape);
            ModelConfig c = m.config();
            ExpertPlan plan = SplitBackend.plan(m.mine());
            assertEquals(placement().plan.apply(c.numHiddenLayers()), plan);
            int T = 3, k = c.expertsPerToken();
            SplittableRandom r = new SplittableRandom(38);
            float[] x = new float[T * c.hiddenSize()];
            for (int i = 0; i < x.length; i++) x[i] = (float) r.nextGaussian();
            boolean streams = streamMinTokens() > 0 && T >= streamMinTokens();
            for (int layer = 0; layer < c.numHiddenLayers(); layer++) {
                long before = backend.counters().get("split_cpu_moe"),
                        streamedBefore = backend.counters().get("split_streamed_moe");
                try (Pair in = pair(T, c.hiddenSize(), x);
                        Pair out = pair(T, c.hiddenSize(), null);
                        DeviceRouting rm = backend.allocateRouting(T, k);
                        DeviceRouting rr = reference.allocateRouting(T, k)) {
                    reference.router(m.ref(), layer, in.ref(), rr);
                    Routing want = reference.readRouting(rr);
                    backend.writeRouting(rm, want);
                    backend.moe(m.mine(), layer, in.mine(), rm, out.mine());
                    reference.moe(m.ref(), layer, in.ref(), rr, out.ref());
                    assertClose(
                            "moe of layer " + layer + " (" + plan + "), " + shape,
                            reference.read(out.ref()),
                            backend.read(out.mine()),
                            T,
                            c.hiddenSize(),
                            moeTolerance());
                }
                assertEquals(
                        before + (plan.onCpu(layer) && !streams ? 1 : 0),
                        backend.counters().get("split_cpu_moe"),
                        "layer " + layer);
                assertEquals(
                        streamedBefore + (plan.onCpu(layer) && streams ? 1 : 0),
                        backend.counters().get("split_streamed_moe"),
                        "streamed, layer " + layer);
            }
            assertTrue(plan.splits());
        }
    }

    /**
     * The non-finite guard on a split model: NaN in every MXFP4 scale of one layer's down projection (scale byte 255;
     * on the CPU's side, and on the GPU's where the placement leaves it one) stops generation with the very line the
     * unsplit GPU backend prints, naming that layer's MOE; after a prefill of five tokens, and after a one-token first
     * step (a step CUDA records: one graph per GPU segment). Not the gate/up matrices: the GPU kernels' swiglu clamps
     * (fmin/fmax) turn a NaN there into a finite value, so the unsplit GPU prints tokens where the reference stops.
     */
    @Test
    void nanInAnExpertStopsWithTheUnsplitModelsLine() {
        ModelConfig c = TestModelPresets.tiny();
        ExpertPlan plan = placement().plan.apply(c.numHiddenLayers());
        List<Integer> layers = new ArrayList<>();
        IntStream.range(0, c.numHiddenLayers()).filter(plan::onCpu).findFirst().ifPresent(layers::add);
        IntStream.range(0, c.numHiddenLayers())
                .filter(l -> !plan.onCpu(l))
                .findFirst()
                .ifPresent(layers::add);
        for (int layer : layers)
            for (int[] prompt : new int[][] {{1, 2, 3, 4, 5}, {7}}) {
                String split = nonFiniteLine(backend, layer, prompt), whole;
                try (Backend gpu = gpu().create(options())) {
                    whole = nonFiniteLine(gpu, layer, prompt);
                }
                String where = "layer " + layer + (plan.onCpu(layer) ? " (CPU's)" : " (GPU's)") + ", prompt of "
                        + prompt.length;
                assertTrue(
                        whole.contains("first appears in the output of MOE[layer " + layer + "] at position 0"),
                        where + ": " + whole);
                assertEquals(whole, split, where);
            }
    }

    /** The one-line error of a greedy generation from {@code prompt} with NaN scales in layer {@code layer}'s down projection. */
    private static String nonFiniteLine(Backend b, int layer, int[] prompt) {
        try (Checkpoint ck = new TestModelGenerator(TestModelPresets.tiny(), 21).inMemory()) {
            ck.tensor("block." + layer + ".mlp.mlp2_weight.scales").bytes().fill((byte) 255);
            try (LoadedWeights w = b.loadWeights(ModelWeights.of(ck));
                    Session s = new Session(b, w, 64)) {
                return assertThrows(
                                GossException.class,
                                () -> s.generate(
                                        prompt, new GenerationOptions(4, Set.of(), SamplerConfig.greedy()), t -> {
                                            throw new AssertionError("token " + t + " printed");
                                        }))
                        .getMessage();
            }
        }
    }

    /**
     * Continuous batching on the split model against the reference: three sequences join at steps 0, 1 and 2, their
     * prompts (11, 4 and 7 tokens) in chunks of 4 beside the others' decode tokens, then all three decode side by side
     * (steps of several one-token sequences: on CUDA recorded, one graph per GPU segment), fed fixed tokens. Every logits
     * row a sequence gets back matches the reference's logits of its tokens run alone, at the kit's whole-model tolerance.
     */
    @Test
    void batchedStepsOfASplitModelMatchTheReference() {
        Model m = model("tiny");
        ModelConfig c = m.config();
        int v = c.vocabSize(), n = 3, decodes = 10, chunk = 4;
        int[] promptLengths = {11, 4, 7};
        int[][] tokens = new int[n][];
        float[][] want = new float[n][];
        for (int i = 0; i < n; i++) {
            tokens[i] = sequence(promptLengths[i] + decodes, v, 51 + i);
            try (Session s = new Session(reference, m.ref(), 40)) {
                want[i] = s.prefillAllLogits(tokens[i]);
            }
        }
        long offloadedBefore = backend.counters().get("split_cpu_moe"),
                streamedBefore = backend.counters().get("split_streamed_moe");
        int streamingSteps = 0;
        int[] pos = new int[n];
        int checked = 0, steps = 0;
        KvCache[] caches = new KvCache[n];
        try (Executor ex = new Executor(backend, m.mine())) {
            for (int i = 0; i < n; i++) caches[i] = backend.createKvCache(new KvCacheSpec(c, 40));
            for (int step = 0; ; step++) {
                List<Executor.Request> requests = new ArrayList<>();
                List<Integer> who = new ArrayList<>();
                for (int i = 0; i < n; i++) {
                    if (step < i || pos[i] == tokens[i].length) continue;
                    int take = pos[i] < promptLengths[i] ? Math.min(chunk, promptLengths[i] - pos[i]) : 1;
                    Executor.Output out =
                            pos[i] + take >= promptLengths[i] ? Executor.Output.LAST_LOGITS : Executor.Output.NONE;
                    requests.add(new Executor.Request(
                            Arrays.copyOfRange(tokens[i], pos[i], pos[i] + take), caches[i], pos[i], out));
                    who.add(i);
                }
                if (requests.isEmpty()) break;
                Executor.Result[] results = ex.step(requests);
                steps++;
                int rows = requests.stream().mapToInt(q -> q.tokens().length).sum();
                if (streamMinTokens() > 0 && rows > requests.size() && rows >= streamMinTokens()) streamingSteps++;
                for (int j = 0; j < who.size(); j++) {
                    int i = who.get(j);
                    Executor.Request q = requests.get(j);
                    int last = pos[i] + q.tokens().length - 1;
                    pos[i] += q.tokens().length;
                    if (q.output() == Executor.Output.NONE) continue;
                    assertClose(
                            "sequence " + i + " at position " + last + " (step " + step + " of " + who.size()
                                    + " sequences)",
                            Arrays.copyOfRange(want[i], last * v, (last + 1) * v),
                            results[j].logits(),
                            1,
                            v,
                            modelTolerance());
                    checked++;
                }
            }
        } finally {
            for (KvCache k : caches) if (k != null) k.close();
        }
        assertEquals(n * (decodes + 1), checked, "results checked");
        ExpertPlan plan = SplitBackend.plan(m.mine());
        assertEquals(
                offloadedBefore + (long) (steps - streamingSteps) * plan.cpuLayers(),
                backend.counters().get("split_cpu_moe"),
                "every step that does not stream ran the CPU's layers there");
        assertEquals(
                streamedBefore + (long) streamingSteps * plan.cpuLayers(),
                backend.counters().get("split_streamed_moe"),
                "every step with a prompt chunk of " + streamMinTokens() + "+ rows streamed the CPU's layers' experts");
        if (streamMinTokens() > 0)
            assertTrue(
                    streamingSteps > 0 && streamingSteps < steps, streamingSteps + " of " + steps + " steps streamed");
    }
}
