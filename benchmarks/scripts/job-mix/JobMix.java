/*
 * JobMix.java — one decode token's weight reads as the cpu backend's jobs make them, without a model: the same native
 * kernels (libgoss_cpu, the family this CPU runs best), the same CpuPool.runInShares, the same split of each job into
 * claims, over gpt-oss-20b-shaped random tiles; a C probe pass between every two tokens, each op's GB/s set against the
 * mean of the passes around its token (as `bench --op-times` does). Between the jobs nothing else runs, so where its
 * shares match the engine's op table, the loss is in the jobs themselves (their sizes, their order, the pool, the JVM),
 * not in the ops between them (attention, norms, the router, quantizing the activations).
 *
 *     java --enable-native-access=ALL-UNNAMED -cp goss-gpu.jar benchmarks/scripts/job-mix/JobMix.java [LAYERS [TOKENS [EXPERTS]]]
 *
 * LAYERS (24) of q/k/v and attn_out (q8 tiles: 4096 + 512 + 512 rows of 2880 columns; 2880 rows of 4096) and 32
 * experts of gate, up and down (mx4 tiles, 2880 × 2880 each), and the 201088-row q8 unembedding: 11.3 GB at 24
 * layers (LAYERS × 450 MB + 615 MB), allocated and written before the first token. TOKENS (32) timed after 4 untimed;
 * each layer's 4 experts drawn at random (the same draw every run) or, with EXPERTS "contiguous", experts 0-3. EXPERTS
 * "paired" (or "paired=5,13,22,29") makes the tokens take turns, A B B A ..., between experts drawn at random and a fixed
 * set (0-3, or the four given), and prints the MoE's share of the probe for each and fixed − random per pair of tokens:
 * what reading the experts the token before last read gains over fresh ones, with the memory's speed the same for both.
 *
 * What it mirrors (keep in step with the engine): MatrixJob's 64-row items with one kernel call per matrix a claimed
 * run covers; MoeJob's 256-row items per expert merged into calls of up to 4096 rows, gate then up per claimed run,
 * then down as a second job. benchmarks/scripts/README.md says how to read it.
 */
import io.gossgpu.cpu.bindings.goss_cpu_h;
import io.gossgpu.cpu.compute.CpuKernels;
import io.gossgpu.cpu.compute.CpuPool;
import io.gossgpu.cpu.matmul.KernelSet;
import io.gossgpu.cpu.matmul.NativeCpu;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Locale;
import java.util.Random;

public class JobMix {
    static final int H = 2880, EXPERTS = 32, ACTIVE = 4, ITEM_ROWS = 64, TILE_ROWS = 256, MERGED_ROWS = 4096;
    static final String[] OPS = {"qkv", "attn_out", "moe gate_up", "moe down", "logits"};

    /** One weight in tiles: {@code experts} matrices of {@code rows} × {@code blocks}·32, codes and scales apart. */
    record Tiles(MemorySegment codes, MemorySegment scales, boolean mx4, int rows, int blocks, int experts) {
        long codeBytes() { return (long) (rows + 15) / 16 * blocks * (mx4 ? 256 : 512); }
        long scaleBytes() { return (long) (rows + 15) / 16 * blocks * (mx4 ? 16 : 32); }
        long expertBytes() { return codeBytes() + scaleBytes(); }

        static Tiles random(boolean mx4, int rows, int cols, int experts, long seed) {
            Tiles t = new Tiles(null, null, mx4, rows, cols / 32, experts);
            long cb = t.codeBytes() * experts, sb = t.scaleBytes() * experts;
            MemorySegment c = alloc(cb), s = alloc(sb);
            long x = seed * 0x9E3779B97F4A7C15L | 1; // xorshift codes; scales near 1 (E8M0 120-129, F16 0x3400)
            for (long i = 0; i < cb / 8; i++) {
                x ^= x << 13; x ^= x >>> 7; x ^= x << 17;
                c.set(ValueLayout.JAVA_LONG_UNALIGNED, 8 * i, x);
            }
            for (long i = 0; i < sb; i++) s.set(ValueLayout.JAVA_BYTE, i, (byte) (mx4 ? 120 + i % 10 : (i & 1) != 0 ? 0x34 : 0));
            return new Tiles(c, s, mx4, rows, cols / 32, experts);
        }
    }

    static MemorySegment alloc(long bytes) {
        MemorySegment p = goss_cpu_h.goss_cpu_alloc(bytes);
        if (p.equals(MemorySegment.NULL)) throw new IllegalStateException("no memory for " + (bytes >> 20) + " MiB of tiles");
        return p.reinterpret(bytes);
    }

    static KernelSet kernels;
    static CpuPool pool;
    // one token's q8 activations (up to 4096 columns), as MatrixInput holds them: on the heap
    static final byte[] q = new byte[4096];
    static final float[] d = new float[128];
    static final int[] sums = new int[128];
    /** Per participant, room for the longest call's rows (a claimed run of the unembedding is at most a quarter of it). */
    static final float[][] out = new float[2][201088];

    /** Rows r0..r1 (r0 a multiple of 16) of expert e of t, into participant w's output rows. */
    static void gemm(Tiles t, int e, int r0, int r1, int w) {
        MemorySegment c = t.codes.asSlice(e * t.codeBytes()), s = t.scales.asSlice(e * t.scaleBytes());
        MemorySegment qs = MemorySegment.ofArray(q), ds = MemorySegment.ofArray(d), ss = MemorySegment.ofArray(sums);
        MemorySegment o = MemorySegment.ofArray(out[w]);
        kernels.tileGemm(t.mx4, c, s, t.blocks, r1, r0 / 16, (r1 + 15) / 16, qs, ds, ss, 1, o, 0, MemorySegment.NULL);
    }

    /** As MatrixJob: the matrices' rows in 64-row items, one job; a claimed run is one call per matrix it covers. */
    static void matrixJob(Tiles... ms) {
        int[] first = new int[ms.length + 1];
        for (int p = 0; p < ms.length; p++) first[p + 1] = first[p] + (ms[p].rows + ITEM_ROWS - 1) / ITEM_ROWS;
        pool.runInShares(first[ms.length], 1, (from, to, w) -> {
            int p = 0;
            for (int item = from; item < to; ) {
                while (first[p + 1] <= item) p++;
                int last = Math.min(to, first[p + 1]);
                gemm(ms[p], 0, (item - first[p]) * ITEM_ROWS, Math.min(ms[p].rows, (last - first[p]) * ITEM_ROWS), w);
                item = last;
            }
        });
    }

    /** As MoeJob for one token: each expert's rows in 256-row items, calls of up to 4096 rows; {@code b}'s after {@code a}'s. */
    static void moeJob(Tiles a, Tiles b, int[] experts) {
        int tiles = (a.rows + TILE_ROWS - 1) / TILE_ROWS, perCall = MERGED_ROWS / TILE_ROWS;
        pool.runInShares(experts.length * tiles, 1, (from, to, w) -> {
            for (int item = from; item < to; ) {
                int e = item / tiles, last = Math.min(Math.min(to, (e + 1) * tiles), item + perCall);
                int r0 = (item % tiles) * TILE_ROWS, r1 = Math.min(a.rows, (last - e * tiles) * TILE_ROWS);
                gemm(a, experts[e], r0, r1, w);
                if (b != null) gemm(b, experts[e], r0, r1, w);
                item = last;
            }
        });
    }

    static void fail(String message) {
        System.err.println("job-mix: " + message);
        System.exit(2);
    }

    /** The paired mode's line: each set's median MoE share, and fixed − random over pairs of kept tokens (0 = left out). */
    static void printPaired(int[] fixed, boolean[] fixedToken, double[] share) {
        java.util.List<Double> random = new java.util.ArrayList<>(), same = new java.util.ArrayList<>(), diff = new java.util.ArrayList<>();
        for (int t = 0; t < share.length; t++) if (share[t] > 0) (fixedToken[t] ? same : random).add(share[t]);
        for (int t = 0; t + 1 < share.length; t += 2)
            if (share[t] > 0 && share[t + 1] > 0) diff.add(fixedToken[t + 1] ? share[t + 1] - share[t] : share[t] - share[t + 1]);
        long ahead = diff.stream().filter(x -> x > 0).count();
        System.out.printf(Locale.ROOT, "  experts paired (MoE, share of the probe): at random %.0f %% (%d tokens), fixed %s %.0f %% (%d tokens); "
                        + "fixed − random per pair of tokens: median %+.1f points, fixed ahead in %d of %d%n",
                median(random), random.size(), java.util.Arrays.toString(fixed), median(same), same.size(), median(diff), ahead, diff.size());
    }

    static double median(java.util.List<Double> v) {
        double[] x = v.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        return x.length == 0 ? Double.NaN : x.length % 2 == 1 ? x[x.length / 2] : (x[x.length / 2 - 1] + x[x.length / 2]) / 2;
    }

    public static void main(String[] args) {
        int layers = args.length > 0 ? Integer.parseInt(args[0]) : 24, tokens = args.length > 1 ? Integer.parseInt(args[1]) : 32;
        String mode = args.length > 2 ? args[2] : "random";
        boolean contiguous = mode.equals("contiguous"), paired = mode.equals("paired") || mode.startsWith("paired=");
        if (!contiguous && !paired && !mode.equals("random"))
            fail("EXPERTS is random, contiguous, paired or paired=E1,E2,E3,E4, got " + mode);
        int[] fixed = {0, 1, 2, 3};
        if (mode.startsWith("paired="))
            try {
                fixed = java.util.Arrays.stream(mode.substring(7).split(",")).mapToInt(Integer::parseInt).toArray();
            } catch (NumberFormatException e) {
                fail("paired= takes experts as numbers, got " + mode);
            }
        if (fixed.length != ACTIVE || java.util.Arrays.stream(fixed).distinct().count() != ACTIVE
                || java.util.Arrays.stream(fixed).anyMatch(e -> e < 0 || e >= EXPERTS))
            fail("paired= takes " + ACTIVE + " distinct experts from 0 to " + (EXPERTS - 1) + ", got " + mode);
        if (layers < 1 || tokens < 1) fail("LAYERS and TOKENS must be at least 1");
        kernels = KernelSet.of(null, CpuKernels.best()); // the family NativeCpu picks; loads libgoss_cpu
        if (kernels.isa() == KernelSet.Isa.JAVA) throw new IllegalStateException("no native kernels here: " + NativeCpu.unavailableReason());
        for (int i = 0; i < q.length; i++) q[i] = (byte) (i * 37 % 101 - 50);
        java.util.Arrays.fill(d, 0.01f);
        Tiles[][] layer = new Tiles[layers][];
        for (int l = 0; l < layers; l++)
            layer[l] = new Tiles[]{Tiles.random(false, 4096, H, 1, 7 * l + 1), Tiles.random(false, 512, H, 1, 7 * l + 2),
                    Tiles.random(false, 512, H, 1, 7 * l + 3), Tiles.random(false, H, 4096, 1, 7 * l + 4),
                    Tiles.random(true, H, H, EXPERTS, 7 * l + 5), Tiles.random(true, H, H, EXPERTS, 7 * l + 6),
                    Tiles.random(true, H, H, EXPERTS, 7 * l + 7)};
        Tiles logits = Tiles.random(false, 201088, H, 1, 0);
        long[] bytes = new long[OPS.length];
        for (Tiles[] m : layer) {
            bytes[0] += m[0].expertBytes() + m[1].expertBytes() + m[2].expertBytes();
            bytes[1] += m[3].expertBytes();
            bytes[2] += ACTIVE * (m[4].expertBytes() + m[5].expertBytes());
            bytes[3] += ACTIVE * m[6].expertBytes();
        }
        bytes[4] = logits.expertBytes();
        int threads = 2;
        pool = new CpuPool(threads);
        MemorySegment probe = goss_cpu_h.goss_cpu_probe_open(threads, 512L << 20);
        if (probe.equals(MemorySegment.NULL)) throw new IllegalStateException("no memory for the probe");
        Random draw = new Random(42);
        long[] nanos = new long[OPS.length];
        // paired: per timed token, whether it read the fixed set, and its MoE's share of the probe passes around it
        boolean[] fixedToken = new boolean[tokens];
        double[] moeShare = new double[tokens];
        double[] probed = new double[OPS.length];
        int kept = 0, unsteady = 0;
        double before = goss_cpu_h.goss_cpu_probe_pass(probe, 2);
        CpuPool.Stats start = null;
        for (int t = -4; t < tokens; t++) {
            if (t == 0) {
                pool.profile(true);
                start = pool.stats();
            }
            int[][] experts = new int[layers][];
            boolean useFixed = contiguous || paired && ((t + 1) / 2) % 2 == 1; // paired: A B B A ... from the first timed token
            for (int l = 0; l < layers; l++)
                experts[l] = useFixed ? fixed : draw.ints(0, EXPERTS).distinct().limit(ACTIVE).toArray();
            long[] tn = new long[OPS.length];
            for (int l = 0; l < layers; l++) {
                Tiles[] m = layer[l];
                long t0 = System.nanoTime();
                matrixJob(m[0], m[1], m[2]);
                long t1 = System.nanoTime();
                matrixJob(m[3]);
                long t2 = System.nanoTime();
                moeJob(m[4], m[5], experts[l]);
                long t3 = System.nanoTime();
                moeJob(m[6], null, experts[l]);
                long t4 = System.nanoTime();
                tn[0] += t1 - t0;
                tn[1] += t2 - t1;
                tn[2] += t3 - t2;
                tn[3] += t4 - t3;
            }
            long t5 = System.nanoTime();
            matrixJob(logits);
            tn[4] = System.nanoTime() - t5;
            double after = goss_cpu_h.goss_cpu_probe_pass(probe, 2), mean = (before + after) / 2;
            if (t >= 0) {
                if (Math.abs(after - before) > 0.2 * Math.min(before, after)) unsteady++;
                else {
                    kept++;
                    fixedToken[t] = useFixed;
                    moeShare[t] = 100.0 * (bytes[2] + bytes[3]) / (tn[2] + tn[3]) / mean;
                    for (int i = 0; i < OPS.length; i++) {
                        nanos[i] += tn[i];
                        probed[i] += tn[i] * mean;
                    }
                }
            }
            before = after;
        }
        CpuPool.Stats s = pool.stats().minus(start);
        goss_cpu_h.goss_cpu_probe_close(probe);
        pool.close();
        System.out.printf(Locale.ROOT, "job-mix: %s kernels, %d threads, %d layers, experts %s; %d tokens kept, %d left out "
                + "(their probes differed by more than 20 %%)%n", kernels.isa().knobValue(), threads, layers, contiguous ? "0-3" : paired ? "at random and fixed, in turns" : "at random", kept, unsteady);
        if (kept == 0) return;
        long allBytes = 0, allNanos = 0;
        double allProbed = 0;
        System.out.printf(Locale.ROOT, "  %-12s %9s %10s %8s %8s %6s%n", "op", "ms/token", "MB/token", "GB/s", "of probe", "probe");
        for (int i = 0; i < OPS.length; i++) {
            double gbps = bytes[i] * (double) kept / nanos[i], p = probed[i] / nanos[i];
            System.out.printf(Locale.ROOT, "  %-12s %9.3f %10.2f %8.1f %7.0f%% %6.1f%n", OPS[i], nanos[i] / 1e6 / kept, bytes[i] / 1e6, gbps, 100 * gbps / p, p);
            allBytes += bytes[i];
            allNanos += nanos[i];
            allProbed += probed[i];
        }
        double gbps = allBytes * (double) kept / allNanos, p = allProbed / allNanos;
        System.out.printf(Locale.ROOT, "  %-12s %9.3f %10.2f %8.1f %7.0f%% %6.1f%n", "all", allNanos / 1e6 / kept, allBytes / 1e6, gbps, 100 * gbps / p, p);
        long wall = 0, busy = 0, jobs = 0;
        for (int tag = 0; tag < CpuPool.TAGS; tag++) {
            wall += s.wallNanos()[tag];
            busy += s.busyNanos()[tag];
            jobs += s.jobs()[tag];
        }
        System.out.printf(Locale.ROOT, "  pool: %.0f jobs per token, idle %.1f %% of their core time; a worker joined %.1f jobs per token "
                        + "from a park, %.0f µs on average after the job opened (every token, its unsteady ones too)%n",
                jobs / (double) (kept + unsteady), 100.0 * Math.max(0, threads * wall - busy) / (threads * wall),
                s.wakes() / (double) (kept + unsteady), s.wakes() == 0 ? 0 : s.wakeNanos() / 1e3 / s.wakes());
        if (paired) printPaired(fixed, fixedToken, moeShare);
    }
}
