package io.gossgpu.bench;

import io.gossgpu.GossException;
import io.gossgpu.backend.Backend;
import io.gossgpu.backend.BackendOptions;
import io.gossgpu.backend.DenseKind;
import io.gossgpu.backend.Backends;
import io.gossgpu.backend.LoadedWeights;
import io.gossgpu.generate.GenerationOptions;
import io.gossgpu.generate.GenerationResult;
import io.gossgpu.generate.Session;
import io.gossgpu.model.Checkpoint;
import io.gossgpu.model.LayerWeights;
import io.gossgpu.model.LoadOptions;
import io.gossgpu.model.ModelConfig;
import io.gossgpu.model.ModelWeights;
import io.gossgpu.model.WeightFormat;
import io.gossgpu.model.WeightView;
import io.gossgpu.testmodel.TestModelGenerator;
import io.gossgpu.testmodel.TestModelPresets;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * llama-bench for goss-gpu: prefill (pp N: one batch of N random tokens from an empty context) and decode
 * (tg N: N greedy steps after a one-token prompt) throughput, each repeated and reported as mean ± sample
 * standard deviation, after one untimed warm-up run of each (JIT). For decode it also reports the bytes a
 * decoded token reads (dense matrices, the k chosen experts' MXFP4 rows and scales, the unembedding, the KV
 * cache at the mean decode position) and the achieved GB/s; with a measured memory bandwidth it adds the
 * fraction of the bandwidth ceiling.
 *
 * The command line is {@code goss-gpu bench} (cli module); {@code model} may be {@code "demo"} for an
 * in-memory random-weight demo model.
 */
public final class Bench {
    private Bench() {}

    /** What to run. {@code model} is a checkpoint path or {@code "demo"}; the backend is created with {@code backendOptions}. */
    public record Options(String model, String backend, BackendOptions backendOptions, int pp, int tg, int reps, double bandwidthGBps) {
        public Options {
            if (pp < 0 || tg < 0 || pp + tg == 0) throw new GossException("bench: -p and -n must be >= 0 and not both 0");
            if (reps < 1) throw new GossException("bench: -r must be at least 1, got " + reps);
        }

        /** These options with the backend created with {@code o}. */
        public Options withBackendOptions(BackendOptions o) {
            return new Options(model, backend, o, pp, tg, reps, bandwidthGBps);
        }
    }

    /** One table row: test name ("pp512", "tg128"), tokens per second (mean, stddev, median), and for tg bytes/token and GB/s. */
    public record Row(String test, double mean, double stddev, long bytesPerToken, double gbPerSecond, double cpuNormalized, double median) {}

    /** CPU time of this process in ns (all threads, JIT and GC included), or -1 when the JVM cannot say. */
    static long processCpuNanos() {
        try {
            if (java.lang.management.ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os)
                return os.getProcessCpuTime();
        } catch (RuntimeException | LinkageError ignored) {
            // not a HotSpot-style JVM
        }
        return -1;
    }

    public record Report(String model, String backend, String device, List<Row> rows, double bandwidthGBps) {
        public String markdown() {
            StringBuilder sb = new StringBuilder();
            sb.append("| model | backend | test | t/s | t/s per CPU time | bytes/token | GB/s |").append(bandwidthGBps > 0 ? " of ceiling |" : "").append('\n');
            sb.append("|---|---|---|---:|---:|---:|---:|").append(bandwidthGBps > 0 ? "---:|" : "").append('\n');
            for (Row r : rows) {
                boolean tg = r.bytesPerToken > 0;
                sb.append(String.format(Locale.ROOT, "| %s | %s | %s | %.2f ± %.2f | %s | %s | %s |", model, backend, r.test, r.mean, r.stddev,
                        r.cpuNormalized > 0 ? String.format(Locale.ROOT, "%.2f", r.cpuNormalized) : "",
                        tg ? String.format(Locale.ROOT, "%.3f GB", r.bytesPerToken / 1e9) : "",
                        tg ? String.format(Locale.ROOT, "%.1f", r.gbPerSecond) : ""));
                if (bandwidthGBps > 0)
                    sb.append(tg ? String.format(Locale.ROOT, " %.0f %% (ceiling %.1f t/s) |", 100 * r.gbPerSecond / bandwidthGBps,
                            bandwidthGBps * 1e9 / r.bytesPerToken) : " |");
                sb.append('\n');
            }
            sb.append("\ndevice: ").append(device).append('\n');
            sb.append("t/s: wall clock, mean ± sample stddev over the repetitions. t/s per CPU time: tokens ÷ (process CPU time ÷ threads),\n"
                    + "best repetition: an estimate of the wall clock if no other process competed for the cores (JIT, GC and\n"
                    + "spin-waiting count against it; idle workers in serial phases flatter it). Equal on an idle machine.\n");
            return sb.toString();
        }
    }

    public static Report run(Options o, PrintStream log) {
        Checkpoint ck = o.model.equals("demo") ? new TestModelGenerator(TestModelPresets.demo(), 1).inMemory()
                : Checkpoint.open(Path.of(o.model), LoadOptions.defaults());
        try (ck; Backend b = Backends.open(o.backend, o.backendOptions)) {
            ModelWeights mw = ModelWeights.of(ck);
            ModelConfig c = mw.config();
            LoadedWeights w = b.loadWeights(mw);
            List<Row> rows = new ArrayList<>();
            int ctx = Math.max(o.pp, o.tg + 1) + 1;
            int threads = b.name().equals("reference") ? 1 : io.gossgpu.cpu.CpuBackendProvider.threads(o.backendOptions);
            SplittableRandom rnd = new SplittableRandom(42);
            try (Session s = new Session(b, w, ctx)) {
                if (o.pp > 0) {
                    int[] prompt = new int[o.pp];
                    for (int i = 0; i < prompt.length; i++) prompt[i] = rnd.nextInt(c.vocabSize());
                    double[] tps = new double[o.reps];
                    double bestCpu = 0;
                    for (int rep = -1; rep < o.reps; rep++) {
                        s.reset();
                        long c0 = processCpuNanos();
                        long t0 = System.nanoTime();
                        s.prefill(prompt);
                        double sec = (System.nanoTime() - t0) / 1e9;
                        long c1 = processCpuNanos();
                        if (rep >= 0) tps[rep] = o.pp / sec;
                        if (rep >= 0 && c0 >= 0 && c1 > c0) bestCpu = Math.max(bestCpu, o.pp / ((c1 - c0) / 1e9 / threads));
                        if (log != null) log.printf(Locale.ROOT, "pp%d %s: %.2f t/s%n", o.pp, rep < 0 ? "warm-up" : "rep " + (rep + 1), o.pp / sec);
                    }
                    rows.add(new Row("pp" + o.pp, mean(tps), std(tps), 0, 0, bestCpu, median(tps)));
                }
                if (o.tg > 0) {
                    double[] tps = new double[o.reps];
                    double bestCpu = 0;
                    for (int rep = -1; rep < o.reps; rep++) {
                        s.reset();
                        long c0 = processCpuNanos();
                        long t0 = System.nanoTime();
                        GenerationResult g = s.generate(new int[]{rnd.nextInt(c.vocabSize())}, GenerationOptions.greedy(o.tg + 1), null);
                        double wall = (System.nanoTime() - t0) / 1e9;
                        long c1 = processCpuNanos();
                        double t = g.timings().decodeTokensPerSecond();
                        if (rep >= 0) tps[rep] = t;
                        // scale the decode rate by the share of the cores this run got (wall time vs CPU time / threads)
                        if (rep >= 0 && c0 >= 0 && c1 > c0) bestCpu = Math.max(bestCpu, t * wall / ((c1 - c0) / 1e9 / threads));
                        if (log != null) log.printf(Locale.ROOT, "tg%d %s: %.2f t/s%n", o.tg, rep < 0 ? "warm-up" : "rep " + (rep + 1), t);
                    }
                    long bytes = bytesPerDecodedToken(mw, 1 + o.tg / 2);
                    double m = mean(tps);
                    rows.add(new Row("tg" + o.tg, m, std(tps), bytes, bytes * m / 1e9, bestCpu, median(tps)));
                }
            } finally {
                w.close();
            }
            String name = o.model.equals("demo") ? "demo" : Path.of(o.model).getFileName().toString();
            return new Report(name, b.name(), b.deviceDescription(), rows, o.bandwidthGBps);
        }
    }

    /**
     * Bytes one decoded token reads at KV position {@code position}: every dense matrix of every layer
     * (Q, K, V, output, router), {@code experts_per_token} experts' gate, up and down rows (with their
     * scale bytes), the unembedding, one embedding row, and the K and V of the positions attended.
     * Biases and norm scales (a few KB) are left out.
     */
    public static long bytesPerDecodedToken(ModelWeights w, int position) {
        ModelConfig c = w.config();
        long total = w.unembedding().rows() * w.unembedding().rowBytes() + w.embedding().rowBytes();
        for (int l = 0; l < c.numHiddenLayers(); l++) {
            LayerWeights lw = w.layers().get(l);
            for (DenseKind kind : DenseKind.values()) total += matrixBytes(kind.weight(lw));
            total += c.expertsPerToken() * (matrixBytes(lw.gate()) + matrixBytes(lw.up()) + matrixBytes(lw.down()));
            int attended = c.isSlidingLayer(l) ? Math.min(position, c.slidingWindow()) : position;
            total += 2L * attended * c.kvDim() * Float.BYTES;
        }
        return total;
    }

    /** Bytes of one expert's (or the one) matrix. */
    private static long matrixBytes(WeightView v) {
        long b = v.rows() * v.rowBytes();
        if (v.format() == WeightFormat.MXFP4_OPENAI) b += (long) v.rows() * (v.cols() / 32);
        return b;
    }

    private static double mean(double[] x) {
        double s = 0;
        for (double v : x) s += v;
        return s / x.length;
    }

    private static double median(double[] x) {
        double[] s = x.clone();
        java.util.Arrays.sort(s);
        return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
    }

    private static double std(double[] x) {
        if (x.length < 2) return 0;
        double m = mean(x), s = 0;
        for (double v : x) s += (v - m) * (v - m);
        return Math.sqrt(s / (x.length - 1));
    }
}
