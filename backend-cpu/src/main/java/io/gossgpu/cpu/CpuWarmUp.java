package io.gossgpu.cpu;

import io.gossgpu.backend.LoadedWeights;
import io.gossgpu.cpu.matmul.KernelSet;
import io.gossgpu.generate.Session;
import io.gossgpu.model.Checkpoint;
import io.gossgpu.model.ModelWeights;
import io.gossgpu.testmodel.TestModelGenerator;
import io.gossgpu.testmodel.TestModelPresets;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Cold start: the first prompt of a fresh JVM used to run the cpu backend's Java glue (the downcalls into the
 * kernels, the jobs around them) interpreted or barely compiled, several times slower than warm. This runs every
 * code path of a kernel set on a tiny generated model, in a background daemon thread started with the first
 * backend, so the JIT has compiled that code by the time the real model has loaded (which takes seconds).
 * Once per JVM and kernel set; best effort: any failure here is ignored, the real run reports its own.
 */
final class CpuWarmUp {
    private CpuWarmUp() {}

    /** Prefill and decode passes: enough calls of each hot method for the JIT's top tier. */
    static final int ROUNDS = 6, PROMPT = 32, STEPS = 48;

    private static final Set<KernelSet.Isa> started = ConcurrentHashMap.newKeySet();

    static void startOnce(KernelSet kernels) {
        if (!started.add(kernels.isa())) return;
        Thread t = new Thread(() -> run(kernels), "goss-cpu-warmup");
        t.setDaemon(true);
        t.start();
    }

    static void run(KernelSet kernels) {
        try (Checkpoint ck = new TestModelGenerator(TestModelPresets.tiny(), 1).inMemory();
                CpuBackend b = new CpuBackend(1, kernels)) {
            ModelWeights w = ModelWeights.of(ck);
            int vocab = w.config().vocabSize();
            int[] prompt = new int[PROMPT];
            for (int i = 0; i < PROMPT; i++) prompt[i] = (i * 7919) % vocab;
            try (LoadedWeights lw = b.loadWeights(w);
                    Session s = new Session(b, lw, PROMPT + STEPS + 1)) {
                for (int round = 0; round < ROUNDS; round++) {
                    s.reset();
                    s.prefill(prompt);
                    for (int i = 0; i < STEPS; i++) s.decode((i * 104729) % vocab);
                }
            }
        } catch (RuntimeException | Error e) {
            // best effort: the warm-up only saves time
        }
    }
}
