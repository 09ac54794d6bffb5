package io.gossgpu.tools;

import io.gossgpu.api.EngineOptions;
import io.gossgpu.backend.BackendOptions;
import io.gossgpu.bench.Bench;
import io.gossgpu.bench.BenchReport;
import io.gossgpu.bench.Tune;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.List;

/**
 * A developer facility: prefill and decode speed in llama-bench's style ({@code goss-gpu bench}), and the sweep of a
 * backend's launch knobs on this device ({@code goss-gpu tune}).
 */
public final class Benchmark {
    private Benchmark() {}

    /**
     * What {@link #run} measures: prefill tests of {@code prompts} tokens and decode tests of {@code gens} tokens (0 skips
     * one), each from each of {@code depths} tokens already in the KV cache, timed {@code reps} times after
     * {@code warmups} untimed runs; decode compared with {@code bandwidthGBps} (0: measured on the cpu backend when
     * {@code measureBandwidth}); each decode test also run as N streams for each N of {@code parallel}; with
     * {@code opTimes}, where each test's time goes op kind by op kind. Checked when run (one-line errors).
     */
    public record Settings(
            List<Integer> prompts,
            List<Integer> gens,
            List<Integer> depths,
            int reps,
            int warmups,
            double bandwidthGBps,
            boolean measureBandwidth,
            List<Integer> parallel,
            boolean opTimes) {}

    /** A benchmark's results, as a markdown table (with the CPU's flags) or JSON. */
    public static final class Report {
        private final BenchReport report;

        private Report(BenchReport report) {
            this.report = report;
        }

        public String markdown() {
            return report.markdown();
        }

        public String json() {
            return report.json();
        }
    }

    /**
     * Benchmarks {@link EngineOptions#model()} (null: an in-memory random-weight model of the demo model's shape) on
     * {@link EngineOptions#backend()}, read, set and placed as the options say; progress goes to {@code log}.
     */
    public static Report run(EngineOptions options, Settings s, PrintStream log) {
        Bench.Options o = new Bench.Options(
                options.model() == null ? "demo" : options.model().toString(),
                Loading.of(options),
                options.backend(),
                options.backendOptions(),
                s.prompts(),
                s.gens(),
                s.depths(),
                s.reps(),
                s.warmups(),
                s.bandwidthGBps(),
                s.measureBandwidth(),
                s.parallel(),
                s.opTimes(),
                options.placement().withKvType(options.kvType()));
        return new Report(Bench.run(o, log));
    }

    /**
     * Fails (one line) unless {@code backend} ({@code auto}: the first available one with knobs) is available and has
     * the {@code knobs} named (empty: all); cheap, so a bad name fails before any model is written.
     */
    public static void checkTuning(String backend, List<String> knobs) {
        Tune.plan(backend, knobs);
    }

    /**
     * Sweeps {@code knobs} (empty: all) of {@code backend} from {@code backendOptions} on {@code model}: each over the
     * values this device allows ({@code quick}: the value in effect and its neighbours), timing a prefill of
     * {@code promptTokens} and a decode of {@code tokens} {@code reps} times, then the best setting against the one in
     * effect over {@code rounds} alternating rounds; progress goes to {@code log}.
     *
     * @return the tables per knob and, when the tuned values win beyond noise, their export lines (markdown)
     */
    public static String tune(
            String backend,
            BackendOptions backendOptions,
            Path model,
            List<String> knobs,
            int promptTokens,
            int tokens,
            int reps,
            boolean quick,
            int rounds,
            PrintStream log) {
        return Tune.run(
                        new Tune.Options(
                                backend,
                                backendOptions,
                                model.toString(),
                                knobs,
                                promptTokens,
                                tokens,
                                reps,
                                quick,
                                rounds),
                        log)
                .markdown();
    }
}
