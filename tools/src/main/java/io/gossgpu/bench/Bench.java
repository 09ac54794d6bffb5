package io.gossgpu.bench;

import io.gossgpu.GossException;
import io.gossgpu.backend.Backend;
import io.gossgpu.backend.BackendOptions;
import io.gossgpu.backend.ExpertPlacement;
import io.gossgpu.backend.KvCacheSpec;
import io.gossgpu.backend.KvType;
import io.gossgpu.backend.LoadedWeights;
import io.gossgpu.cpu.CpuBackendProvider;
import io.gossgpu.device.PlacementPlanner;
import io.gossgpu.forward.Executor;
import io.gossgpu.generate.GenerationOptions;
import io.gossgpu.generate.Session;
import io.gossgpu.generate.StepScheduler;
import io.gossgpu.model.Checkpoint;
import io.gossgpu.model.LoadOptions;
import io.gossgpu.model.ModelWeights;
import io.gossgpu.testmodel.TestModelGenerator;
import io.gossgpu.testmodel.TestModelPresets;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.TreeSet;

/**
 * llama-bench for goss-gpu. Tests, as llama-bench runs them: prefill {@code ppN} (one batch of N random
 * tokens) and decode {@code tgN} (N single-token steps, each feeding back the argmax), each at every depth
 * D ({@code "pp512 @ d8192"}: D random tokens are already in the KV cache when the test starts). Each test
 * runs {@code warmups} times untimed (JIT warm-up; llama-bench warms up once), then {@code reps} times,
 * reported as mean ± sample standard deviation.
 *
 * <p>The cache is filled to each depth once, untimed, in batches of {@link #FILL_BATCH}; every run rolls
 * back to it ({@link Session#rollbackTo}), as llama-bench restores its saved state. Depths run in ascending
 * order, each filled on top of the last.
 *
 * <p>For decode it reports the bytes a token reads ({@link DecodeTraffic}, averaged over the run's positions)
 * and the GB/s that makes; on the cpu backend it first measures the machine's read bandwidth
 * twice, with the backend's thread count: a Java loop ({@link ReadBandwidth}) and a plain C streaming read
 * ({@link StreamProbe}, what the hardware gives), and reports decode as a percentage of the C probe. With
 * {@code --op-times} there, decode's op table comes from one more, untimed run of the test with a C probe pass between
 * every two tokens, each op set against the passes around its tokens ({@link OpTimes}): a shared host's memory can
 * change speed between one probe per run and the run.
 *
 * <p>With {@code parallel} stream counts ({@code -np 1,2,4}), each decode test also runs as N streams at once: N
 * sessions, each on a thread of its own, decoding through one {@link StepScheduler} (continuous batching, as the
 * engine's chats and the server's slots do), timed from their start to the last one's end; the row gives the
 * aggregate tokens per second ({@code "tg32 x4"}) and its ratio to one stream of the same run. The stream counts take
 * turns within each repetition (x1, x2, x4, x1, x2, x4, …), so a machine whose load changes meanwhile shifts them alike.
 *
 * <p>The command line is {@code goss-gpu bench} (cli module); {@code model} may be {@code "demo"} for an
 * in-memory random-weight demo model.
 */
public final class Bench {
    /** Tokens per batch when filling the cache to a depth (llama-bench's default micro-batch). */
    static final int FILL_BATCH = 512;

    private Bench() {}

    /**
     * What to run. {@code model} is a checkpoint path (opened with {@code load}) or {@code "demo"}. {@code bandwidthGBps} &gt; 0 is a
     * known bandwidth (no measurement); 0 measures it on the cpu backend when {@code measureBandwidth}. The backend is
     * created with {@code backendOptions}.
     */
    public record Options(
            String model,
            LoadOptions load,
            String backend,
            BackendOptions backendOptions,
            List<Integer> prompts,
            List<Integer> gens,
            List<Integer> depths,
            int reps,
            int warmups,
            double bandwidthGBps,
            boolean measureBandwidth,
            List<Integer> parallel,
            boolean opTimes,
            ExpertPlacement placement) {
        public Options {
            if (placement == null) throw new NullPointerException("placement");
            prompts = List.copyOf(prompts);
            gens = List.copyOf(gens);
            depths = List.copyOf(depths);
            parallel = List.copyOf(parallel);
            for (int n : parallel) if (n < 1) throw new GossException("bench: -np must be at least 1, got " + n);
            for (int n : prompts) if (n < 0) throw new GossException("bench: -p must be >= 0, got " + n);
            for (int n : gens) if (n < 0) throw new GossException("bench: -n must be >= 0, got " + n);
            for (int d : depths) if (d < 0) throw new GossException("bench: -d must be >= 0, got " + d);
            if (depths.isEmpty()) throw new GossException("bench: -d needs at least one depth");
            if (prompts.stream().allMatch(n -> n == 0) && gens.stream().allMatch(n -> n == 0))
                throw new GossException("bench: -p and -n are all 0: no test to run");
            if (reps < 1) throw new GossException("bench: -r must be at least 1, got " + reps);
            if (warmups < 0) throw new GossException("bench: --warmup must be >= 0, got " + warmups);
            if (bandwidthGBps < 0) throw new GossException("bench: --bandwidth must be positive, got " + bandwidthGBps);
            long ctx =
                    (long) depths.stream().mapToInt(Integer::intValue).max().orElse(0) + longestTest(prompts, gens) + 1;
            if (ctx > Integer.MAX_VALUE)
                throw new GossException("bench: depth plus test length is too long: " + ctx + " tokens");
        }

        /** One prefill and one decode test at depth 0, no bandwidth measurement (tune's timing run). */
        public static Options single(
                String model, String backend, BackendOptions backendOptions, int pp, int tg, int reps) {
            return new Options(
                    model,
                    LoadOptions.defaults(),
                    backend,
                    backendOptions,
                    List.of(pp),
                    List.of(tg),
                    List.of(0),
                    reps,
                    1,
                    0,
                    false,
                    List.of(),
                    false,
                    ExpertPlacement.auto());
        }

        private static int longestTest(List<Integer> prompts, List<Integer> gens) {
            return Math.max(
                    prompts.stream().mapToInt(Integer::intValue).max().orElse(0),
                    gens.stream().mapToInt(Integer::intValue).max().orElse(0));
        }

        /** These options with the backend created with {@code o}. */
        public Options withBackendOptions(BackendOptions o) {
            return new Options(
                    model,
                    load,
                    backend,
                    o,
                    prompts,
                    gens,
                    depths,
                    reps,
                    warmups,
                    bandwidthGBps,
                    measureBandwidth,
                    parallel,
                    opTimes,
                    placement);
        }

        /** These options with a GPU's MoE experts placed as {@code p} says ({@code --cpu-moe}, {@code --n-cpu-moe}). */
        public Options withPlacement(ExpertPlacement p) {
            return new Options(
                    model,
                    load,
                    backend,
                    backendOptions,
                    prompts,
                    gens,
                    depths,
                    reps,
                    warmups,
                    bandwidthGBps,
                    measureBandwidth,
                    parallel,
                    opTimes,
                    p);
        }
    }

    /** CPU time of this process in ns (all threads, JIT and GC included), or -1 when the JVM cannot say. */
    static long processCpuNanos() {
        try {
            if (java.lang.management.ManagementFactory.getOperatingSystemMXBean()
                    instanceof com.sun.management.OperatingSystemMXBean os) return os.getProcessCpuTime();
        } catch (RuntimeException | LinkageError ignored) {
            // not a HotSpot-style JVM
        }
        return -1;
    }

    public static BenchReport run(Options o, PrintStream log) {
        Checkpoint ck = o.model.equals("demo")
                ? new TestModelGenerator(TestModelPresets.demo(), 1).inMemory()
                : Checkpoint.open(Path.of(o.model), o.load);
        // the experts placed for a KV cache as long as the longest run (depth + test), prefill chunks as long as a
        // prompt
        int planTokens = o.depths.stream().mapToInt(Integer::intValue).max().orElse(0)
                + Options.longestTest(o.prompts, o.gens)
                + 1;
        try (ck;
                Backend b = PlacementPlanner.open(
                        o.backend,
                        o.backendOptions,
                        ModelWeights.of(ck),
                        o.placement.withKvTokens(planTokens),
                        Math.max(
                                1,
                                o.prompts.stream()
                                        .mapToInt(Integer::intValue)
                                        .max()
                                        .orElse(1)))) {
            boolean cpu = b.name().equals(CpuBackendProvider.NAME);
            int threads = b.name().equals("reference") ? 1 : CpuBackendProvider.threads(o.backendOptions);
            ReadBandwidth.Result bandwidth = null, stream = null;
            if (o.bandwidthGBps == 0 && o.measureBandwidth && cpu) {
                // before the weights load: the pool's workers are parked and the model's pages are not yet competing
                bandwidth = ReadBandwidth.measure(threads);
                if (log != null) log.println("read bandwidth (Java probe): " + bandwidth.describe());
                stream = StreamProbe.measure(threads);
                if (log != null && stream != null) log.println("C streaming probe: " + stream.describe());
            }
            // decode's share is taken against the machine (the C probe) where it ran, else against the Java loop
            double ceiling = o.bandwidthGBps > 0
                    ? o.bandwidthGBps
                    : stream != null ? stream.gbPerSecond() : bandwidth != null ? bandwidth.gbPerSecond() : 0;
            ModelWeights mw = ModelWeights.of(ck);
            LoadedWeights w = b.loadWeights(mw);
            if (cpu && log != null) log.println(hugePages(w));
            List<BenchReport.Row> rows = new ArrayList<>();
            int longest = Options.longestTest(o.prompts, o.gens);
            int maxDepth = o.depths.stream().mapToInt(Integer::intValue).max().orElse(0);
            SplittableRandom rnd = new SplittableRandom(42);
            // cpu and reference ops are done when they return; a GPU's are queued, so the profile waits for each
            OpTimes times = o.opTimes && log != null
                    ? new OpTimes(b, !cpu && !b.name().equals("reference"), o.placement.kvType())
                    : null;
            // decode's op table on the cpu backend: a C probe pass between every two tokens, where the probe ran and a
            // decode test will (its 512 MiB are held until the tests end)
            boolean decodes = o.gens.stream().anyMatch(tg -> tg > 0);
            StreamProbe.Open between = times != null && stream != null && decodes
                    ? StreamProbe.open(threads, StreamProbe.BETWEEN_TOKENS_BYTES)
                    : null;
            Runner run = new Runner(mw, w, o.placement.kvType(), threads, o.reps, o.warmups, rnd, log, times, between);
            // sliding-window rings keep `longest` extra slots so that every run can roll back to its depth
            try (between) {
                var spec = new KvCacheSpec(mw.config(), maxDepth + longest + 1, longest + 1, o.placement.kvType());
                try (Session s = new Session(b, w, spec, 0)) {
                    if (times != null) s.executor().observer(times);
                    int filled = 0;
                    for (int depth : new TreeSet<>(o.depths)) {
                        filled = fill(s, filled, depth, rnd, log);
                        for (int pp : o.prompts) if (pp > 0) rows.add(run.prefill(s, depth, pp));
                        for (int tg : o.gens) if (tg > 0) rows.add(run.decode(s, depth, tg, ceiling));
                    }
                }
                if (!o.parallel.isEmpty() && decodes)
                    rows.addAll(streams(b, w, o, run, maxDepth + longest + 1, longest + 1, rnd, log));
            } finally {
                w.close();
            }
            String name = o.model.equals("demo")
                    ? "demo"
                    : Path.of(o.model).getFileName().toString();
            return new BenchReport(
                    name,
                    b.name(),
                    b.deviceDescription(),
                    threads,
                    CpuFeatures.detect(),
                    bandwidth,
                    stream,
                    ceiling,
                    o.warmups,
                    o.reps,
                    rows);
        }
    }

    /**
     * How much of the repacked weights can sit on 2 MiB pages: their native bytes beside the process's AnonHugePages
     * (the kernel falls back to 4 KiB pages when it has no free huge pages, and decode then streams with TLB misses).
     */
    static String hugePages(LoadedWeights w) {
        long repacked = io.gossgpu.cpu.CpuBackend.repackedBytes(w), huge = io.gossgpu.cpu.MemInfo.hugePageBytes();
        return String.format(
                Locale.ROOT,
                "repacked weights: %.2f GiB of native memory; 2 MiB pages held by this process: %s "
                        + "(transparent huge pages: %s)",
                repacked / (double) (1L << 30),
                huge < 0 ? "unknown" : String.format(Locale.ROOT, "%.2f GiB", huge / (double) (1L << 30)),
                io.gossgpu.cpu.MemInfo.hugePageMode());
    }

    /** The decode tests as N streams at once ({@link Options#parallel}), N sessions on one scheduler. */
    private static List<BenchReport.Row> streams(
            Backend b,
            LoadedWeights w,
            Options o,
            Runner run,
            int context,
            int rollback,
            SplittableRandom rnd,
            PrintStream log) {
        List<BenchReport.Row> rows = new ArrayList<>();
        int most = o.parallel.stream().mapToInt(Integer::intValue).max().orElse(1);
        try (Executor ex = new Executor(b, w);
                var threads = java.util.concurrent.Executors.newFixedThreadPool(most)) {
            StepScheduler scheduler = new StepScheduler(ex, StepScheduler.DEFAULT_PREFILL_CHUNK);
            List<Session> sessions = new ArrayList<>();
            try {
                var spec = new KvCacheSpec(w.config(), context, rollback, o.placement.kvType());
                for (int i = 0; i < most; i++) sessions.add(new Session(scheduler, spec, 0));
                for (int depth : new TreeSet<>(o.depths)) {
                    for (Session s : sessions) fill(s, s.position(), depth, rnd, null);
                    for (int tg : o.gens)
                        if (tg > 0) rows.addAll(run.streams(sessions, o.parallel, threads, depth, tg));
                }
            } finally {
                sessions.forEach(Session::close);
            }
            StepScheduler.Stats st = scheduler.stats();
            if (log != null && st.steps() > 0)
                log.printf(
                        Locale.ROOT,
                        "streams: %d steps, %.2f sequences per step on average%n",
                        st.steps(),
                        (double) st.sequences() / st.steps());
        }
        return rows;
    }

    /** Brings the cache from {@code filled} tokens to {@code depth} (from 0 when it cannot roll back); returns {@code depth}. */
    private static int fill(Session s, int filled, int depth, SplittableRandom rnd, PrintStream log) {
        if (!s.rollbackTo(Math.min(filled, depth))) s.reset();
        if (s.position() == depth) return depth;
        long t0 = System.nanoTime();
        int from = s.position();
        int vocab = s.executor().weights().config().vocabSize();
        while (s.position() < depth) {
            int[] batch = new int[Math.min(FILL_BATCH, depth - s.position())];
            for (int i = 0; i < batch.length; i++) batch[i] = rnd.nextInt(vocab);
            s.prefill(batch);
        }
        double sec = (System.nanoTime() - t0) / 1e9;
        if (log != null)
            log.printf(
                    Locale.ROOT,
                    "depth %d: filled %d tokens in %.1f s (%.1f t/s)%n",
                    depth,
                    depth - from,
                    sec,
                    (depth - from) / sec);
        return depth;
    }

    /** Times the tests of one session; each run starts from the cache rolled back to its depth. */
    private record Runner(
            ModelWeights mw,
            LoadedWeights held,
            KvType kv,
            int threads,
            int reps,
            int warmups,
            SplittableRandom rnd,
            PrintStream log,
            OpTimes times,
            StreamProbe.Open between) {
        BenchReport.Row prefill(Session s, int depth, int pp) {
            int[] prompt = new int[pp];
            for (int i = 0; i < prompt.length; i++)
                prompt[i] = rnd.nextInt(mw.config().vocabSize());
            Timed t = repeat(BenchReport.testName(pp, 0, depth), pp, () -> {
                rewind(s, depth);
                s.prefill(prompt);
            });
            if (times != null) times.print(log, BenchReport.testName(pp, 0, depth), mw, held, -1, 0, 0);
            return new BenchReport.Row(
                    BenchReport.testName(pp, 0, depth),
                    pp,
                    0,
                    depth,
                    t.mean(),
                    t.std(),
                    t.median(),
                    t.samples(),
                    t.bestPerCpu(),
                    0,
                    0,
                    0,
                    0);
        }

        BenchReport.Row decode(Session s, int depth, int tg, double ceiling) {
            int first = rnd.nextInt(mw.config().vocabSize());
            Timed t = repeat(BenchReport.testName(0, tg, depth), tg, () -> {
                rewind(s, depth);
                int token = first;
                for (int i = 0; i < tg; i++) token = greedyStep(s, token);
            });
            if (times != null && between != null) profileBetweenProbes(s, depth, tg, first);
            if (times != null) times.print(log, BenchReport.testName(0, tg, depth), mw, held, depth, tg, ceiling);
            long bytes = DecodeTraffic.meanBytesPerToken(mw, held, depth, tg, kv);
            double gbps = bytes * t.mean() / 1e9;
            return new BenchReport.Row(
                    BenchReport.testName(0, tg, depth),
                    0,
                    tg,
                    depth,
                    t.mean(),
                    t.std(),
                    t.median(),
                    t.samples(),
                    t.bestPerCpu(),
                    bytes,
                    gbps,
                    ceiling > 0 ? 100 * gbps / ceiling : 0,
                    0);
        }

        /**
         * The op table of one more run of the decode test, untimed, with a pass of the {@link #between} probe before
         * each token and after the last: each token's ops are set against the passes around it ({@link OpTimes#tokenProbed}).
         */
        private void profileBetweenProbes(Session s, int depth, int tg, int first) {
            times.reset();
            rewind(s, depth);
            int token = first;
            double before = between.pass();
            for (int i = 0; i < tg; i++) {
                times.resume();
                token = greedyStep(s, token);
                double after = between.pass();
                times.tokenProbed(before, after);
                before = after;
            }
        }

        /** One decode step of {@code token}: the argmax of its logits, the next token fed back. */
        private static int greedyStep(Session s, int token) {
            return s.forward(new int[] {token}, Executor.Output.LAST_ARGMAX).argmax()[0];
        }

        /**
         * For each count N of {@code counts}: N of {@code sessions} decoding {@code tg} greedy tokens each, side by side
         * (one thread each); a row of their aggregate t/s per N. The counts take turns within each repetition.
         */
        List<BenchReport.Row> streams(
                List<Session> sessions,
                List<Integer> counts,
                java.util.concurrent.ExecutorService pool,
                int depth,
                int tg) {
            int[] first = new int[sessions.size()];
            for (int i = 0; i < first.length; i++)
                first[i] = rnd.nextInt(mw.config().vocabSize());
            double[][] tps = new double[counts.size()][reps];
            double[] bestCpu = new double[counts.size()];
            // with --op-times, one profile per stream count (the counts take turns, so each resumes its own)
            Executor ex = sessions.get(0).executor();
            OpTimes[] profiles = new OpTimes[counts.size()];
            if (times != null) for (int c = 0; c < profiles.length; c++) profiles[c] = times.fresh();
            for (int rep = -warmups; rep < reps; rep++)
                for (int c = 0; c < counts.size(); c++) {
                    int n = counts.get(c);
                    String name = BenchReport.testName(0, tg, depth) + " x" + n;
                    if (times != null) {
                        if (rep == 0) profiles[c].reset();
                        else profiles[c].resume();
                        ex.observer(profiles[c]);
                    }
                    long c0 = processCpuNanos(), t0 = System.nanoTime();
                    List<java.util.concurrent.Future<?>> done = new ArrayList<>();
                    for (int i = 0; i < n; i++) {
                        Session s = sessions.get(i);
                        int token = first[i];
                        rewind(s, depth);
                        done.add(pool.submit(() -> s.generate(new int[] {token}, GenerationOptions.greedy(tg), null)));
                    }
                    for (var f : done) await(f);
                    double sec = (System.nanoTime() - t0) / 1e9;
                    long c1 = processCpuNanos();
                    if (rep >= 0) {
                        tps[c][rep] = n * tg / sec;
                        if (c0 >= 0 && c1 > c0) bestCpu[c] = Math.max(bestCpu[c], n * tg / ((c1 - c0) / 1e9 / threads));
                    }
                    if (log != null)
                        log.printf(
                                Locale.ROOT,
                                "%s %s: %.2f t/s%n",
                                name,
                                rep < 0 ? "warm-up " + (rep + warmups + 1) : "rep " + (rep + 1),
                                n * tg / sec);
                }
            if (times != null) {
                ex.observer(null);
                // per token of the batch: the ops' bytes per token depend on how the streams' experts overlap, so no
                // GB/s
                for (int c = 0; c < profiles.length; c++)
                    profiles[c].print(
                            log, BenchReport.testName(0, tg, depth) + " x" + counts.get(c), mw, held, -1, 0, 0);
            }
            long bytes = DecodeTraffic.meanBytesPerToken(mw, held, depth, tg, kv);
            List<BenchReport.Row> rows = new ArrayList<>();
            for (int c = 0; c < counts.size(); c++) {
                Timed t = new Timed(tps[c], bestCpu[c]);
                rows.add(new BenchReport.Row(
                        BenchReport.testName(0, tg, depth) + " x" + counts.get(c),
                        0,
                        tg,
                        depth,
                        t.mean(),
                        t.std(),
                        t.median(),
                        t.samples(),
                        t.bestPerCpu(),
                        bytes,
                        0,
                        0,
                        counts.get(c)));
            }
            return rows;
        }

        private static void await(java.util.concurrent.Future<?> f) {
            try {
                f.get();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new GossException("bench: interrupted");
            } catch (java.util.concurrent.ExecutionException e) {
                throw e.getCause() instanceof RuntimeException r ? r : new GossException("bench: " + e.getCause());
            }
        }

        private static void rewind(Session s, int depth) {
            if (!s.rollbackTo(depth))
                throw new IllegalStateException("bench: cannot roll the cache back to depth " + depth);
        }

        /** {@code warmups} untimed runs (JIT), then {@code reps} timed runs of {@code body}, each processing {@code tokens} tokens. */
        private Timed repeat(String test, int tokens, Runnable body) {
            double[] tps = new double[reps];
            double bestCpu = 0;
            for (int rep = -warmups; rep < reps; rep++) {
                if (rep == 0 && times != null) times.reset(); // only the timed runs count
                long c0 = processCpuNanos();
                long t0 = System.nanoTime();
                body.run();
                double sec = (System.nanoTime() - t0) / 1e9;
                long c1 = processCpuNanos();
                if (rep >= 0) tps[rep] = tokens / sec;
                if (rep >= 0 && c0 >= 0 && c1 > c0) bestCpu = Math.max(bestCpu, tokens / ((c1 - c0) / 1e9 / threads));
                if (log != null)
                    log.printf(
                            Locale.ROOT,
                            "%s %s: %.2f t/s%n",
                            test,
                            rep < 0 ? "warm-up " + (rep + warmups + 1) : "rep " + (rep + 1),
                            tokens / sec);
            }
            return new Timed(tps, bestCpu);
        }
    }

    /** Tokens per second of the timed runs, and the best rate per CPU time. */
    private record Timed(double[] tps, double bestPerCpu) {
        List<Double> samples() {
            return java.util.Arrays.stream(tps).boxed().toList();
        }

        double mean() {
            double s = 0;
            for (double v : tps) s += v;
            return s / tps.length;
        }

        double median() {
            double[] s = tps.clone();
            java.util.Arrays.sort(s);
            return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
        }

        double std() {
            if (tps.length < 2) return 0;
            double m = mean(), s = 0;
            for (double v : tps) s += (v - m) * (v - m);
            return Math.sqrt(s / (tps.length - 1));
        }
    }
}
