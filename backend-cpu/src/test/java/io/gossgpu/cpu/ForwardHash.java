package io.gossgpu.cpu;

import io.gossgpu.backend.Backend;
import io.gossgpu.backend.LoadedWeights;
import io.gossgpu.cpu.compute.CpuKernels;
import io.gossgpu.cpu.matmul.KernelSet;
import io.gossgpu.generate.Session;
import io.gossgpu.model.Checkpoint;
import io.gossgpu.model.ModelWeights;
import io.gossgpu.testmodel.TestModelGenerator;
import io.gossgpu.testmodel.TestModelPresets;
import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.SplittableRandom;

/**
 * Prints the SHA-256 of every logit (float bits) of a 20-token prefill and 3 decode steps on the tiny test model,
 * on the cpu backend with the kernels and threads given: {@code ForwardHash java|avx2|avx512 THREADS}. Run in
 * fresh JVMs by {@link DeterminismTest}.
 */
public final class ForwardHash {
    public static void main(String[] args) throws Exception {
        KernelSet.Isa isa = KernelSet.Isa.parse("kernels", args[0]);
        int threads = Integer.parseInt(args[1]);
        MessageDigest sha = MessageDigest.getInstance("SHA-256");
        try (Checkpoint ck = new TestModelGenerator(TestModelPresets.tiny(), 77).inMemory();
                Backend cpu = new CpuBackend(threads, KernelSet.of(isa, CpuKernels.best()))) {
            ModelWeights w = ModelWeights.of(ck);
            int v = w.config().vocabSize();
            SplittableRandom r = new SplittableRandom(3);
            int[] prompt = new int[20];
            for (int i = 0; i < prompt.length; i++) prompt[i] = r.nextInt(v);
            try (LoadedWeights lw = cpu.loadWeights(w);
                    Session s = new Session(cpu, lw, 64)) {
                digest(sha, s.prefillAllLogits(prompt));
                for (int i = 0; i < 3; i++) digest(sha, s.decode(r.nextInt(v)));
            }
        }
        System.out.println("hash " + HexFormat.of().formatHex(sha.digest()));
    }

    private static void digest(MessageDigest sha, float[] logits) {
        ByteBuffer b = ByteBuffer.allocate(4 * logits.length);
        for (float f : logits) b.putInt(Float.floatToRawIntBits(f));
        sha.update(b.array());
    }
}
