package io.gossgpu.opencl;

import io.gossgpu.backend.Backend;
import io.gossgpu.backend.Batch;
import io.gossgpu.backend.DenseKind;
import io.gossgpu.backend.DeviceRouting;
import io.gossgpu.backend.DeviceTensor;
import io.gossgpu.backend.KvCache;
import io.gossgpu.backend.KvCacheSpec;
import io.gossgpu.backend.LoadedWeights;
import io.gossgpu.backend.Routing;
import io.gossgpu.generate.Session;
import io.gossgpu.model.Checkpoint;
import io.gossgpu.model.ModelConfig;
import io.gossgpu.model.ModelWeights;
import io.gossgpu.testmodel.TestModelGenerator;
import java.util.SplittableRandom;

/**
 * Not a test: a quick timing probe for choosing knob defaults on the current device (run with the test
 * class path; knobs from GOSS_OPENCL_* / -Dgoss.opencl.*). Prints ms per op at gpt-oss-20b widths with a
 * small vocabulary and expert count, then a decode step of the whole (2-layer) model.
 * Arguments: [experts (8)] [context (512)].
 */
public final class OpenClPerfProbe {
    private OpenClPerfProbe() {}

    public static void main(String[] args) {
        int experts = args.length > 0 ? Integer.parseInt(args[0]) : 8;
        int ctx = args.length > 1 ? Integer.parseInt(args[1]) : 512;
        ModelConfig c = new ModelConfig(
                2, experts, 4, 4096, 2880, 2880, 7.0f, 64, 64, 8, 128, 4096, 150000f, 32f, 1f, 32f, 1e-5f);
        try (Checkpoint ck = new TestModelGenerator(c, 1).inMemory();
                Backend b = OpenClBackend.create(io.gossgpu.backend.BackendOptions.defaults())) {
            System.out.println(b.deviceDescription());
            ModelWeights w = ModelWeights.of(ck);
            long t0 = System.nanoTime();
            LoadedWeights lw = b.loadWeights(w);
            System.out.printf("load %.0f ms%n", (System.nanoTime() - t0) / 1e6);
            SplittableRandom r = new SplittableRandom(1);
            for (int T : new int[] {1, 32}) {
                DeviceTensor x = b.allocate(T, c.hiddenSize()),
                        q = b.allocate(T, c.qDim()),
                        k = b.allocate(T, c.kvDim()),
                        v = b.allocate(T, c.kvDim()),
                        o = b.allocate(T, c.qDim()),
                        y = b.allocate(T, c.hiddenSize());
                float[] xs = new float[T * c.hiddenSize()];
                for (int i = 0; i < xs.length; i++) xs[i] = (float) r.nextGaussian();
                b.write(x, xs);
                DeviceRouting rt = b.allocateRouting(T, 4);
                KvCache cache = b.createKvCache(new KvCacheSpec(c, ctx + T));
                Batch batch = Batch.of(cache, ctx, T);
                time("T=" + T + " qkvRope", b, () -> b.qkvRope(lw, 0, x, batch, q, k, v));
                time(
                        "T=" + T + " attention (full layer 1, ctx " + ctx + ")",
                        b,
                        () -> b.attention(lw, 1, q, k, v, batch, o));
                time(
                        "T=" + T + " attention (sliding layer 0, ctx " + ctx + ")",
                        b,
                        () -> b.attention(lw, 0, q, k, v, batch, o));
                time("T=" + T + " linear ATTN_OUT", b, () -> b.dense(lw, 0, DenseKind.ATTN_OUT, o, y));
                time("T=" + T + " router", b, () -> b.router(lw, 0, x, rt));
                Routing routing = b.readRouting(rt);
                b.writeRouting(rt, routing);
                time("T=" + T + " moe", b, () -> b.moe(lw, 0, x, rt, y));
                time("T=" + T + " rmsNorm", b, () -> b.rmsNorm(lw, 0, io.gossgpu.backend.NormKind.ATTN, x, y));
                time("T=" + T + " argmax", b, () -> b.argmax(lw, x, T - 1));
                for (AutoCloseable a : new AutoCloseable[] {x, q, k, v, o, y, rt, cache}) a.close();
            }
            try (Session s = new Session(b, lw, 64)) {
                int[] prompt = new int[16];
                s.prefillAllLogits(prompt);
                long best = Long.MAX_VALUE;
                for (int i = 0; i < 8; i++) {
                    long t1 = System.nanoTime();
                    s.decode(i);
                    best = Math.min(best, System.nanoTime() - t1);
                }
                System.out.printf("decode step (2 layers, vocab 4096) %.2f ms (best of 8)%n", best / 1e6);
            }
            lw.close();
        } catch (Exception e) {
            throw new RuntimeException(e);
        }
    }

    /** Best of several runs (the machine may be shared: the minimum is the least disturbed figure). */
    private static void time(String what, Backend b, Runnable op) {
        op.run();
        b.synchronize();
        int n = 0;
        long best = Long.MAX_VALUE, t0 = System.nanoTime();
        do {
            long t = System.nanoTime();
            op.run();
            b.synchronize();
            best = Math.min(best, System.nanoTime() - t);
            n++;
        } while (System.nanoTime() - t0 < 500_000_000L && n < 50);
        System.out.printf("%-45s %8.2f ms (best of %d)%n", what, best / 1e6, n);
    }
}
