package io.gossgpu.benchmarks.ops;

import io.gossgpu.backend.BackendProvider;
import io.gossgpu.backend.Backends;
import io.gossgpu.model.ModelConfig;
import io.gossgpu.testmodel.TestModelPresets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * Runs {@link BackendOpsBenchmark} and {@link BackendAttentionBenchmark} on every available backend (or the
 * ones named) and prints a table of ms per call, the bytes each op must read ({@link OpBytes}) and the GB/s
 * that makes, for comparison with the device's memory bandwidth. Unavailable backends are listed and skipped.
 *
 * <p>{@code java --enable-native-access=ALL-UNNAMED --add-modules jdk.incubator.vector -cp benchmarks/target/benchmarks.jar
 * io.gossgpu.benchmarks.ops.OpsReport [--quick] [backend ...]}
 */
public final class OpsReport {
    private OpsReport() {}

    public static void main(String[] args) throws RunnerException {
        boolean quick = Arrays.asList(args).contains("--quick");
        List<String> wanted =
                Arrays.stream(args).filter(a -> !a.startsWith("--")).toList();
        List<String> run = new ArrayList<>();
        for (BackendProvider p : Backends.providers()) {
            if (p.name().equals("reference") || (!wanted.isEmpty() && !wanted.contains(p.name()))) continue;
            var a = Backends.safeAvailability(p);
            if (a.available()) run.add(p.name());
            else System.err.println("ops: skipping " + p.name() + ": " + a.reason());
        }
        if (run.isEmpty()) {
            System.err.println("ops: no backend to run; " + Backends.summary());
            System.exit(1);
        }
        ChainedOptionsBuilder o = new OptionsBuilder()
                .include(BackendOpsBenchmark.class.getName() + "\\.")
                .include(BackendAttentionBenchmark.class.getName() + "\\.")
                .param("backend", run.toArray(String[]::new));
        if (quick)
            o = o.warmupIterations(1)
                    .measurementIterations(2)
                    .measurementTime(TimeValue.milliseconds(500))
                    .param("context", "1024", "8192");
        Collection<RunResult> results = new Runner(o.build()).run();
        System.out.print(table(results));
    }

    static String table(Collection<RunResult> results) {
        StringBuilder sb = new StringBuilder(
                "| backend | op | tokens | context | ms | bytes read | GB/s |\n|---|---|---:|---:|---:|---:|---:|\n");
        for (RunResult r : results) {
            var p = r.getParams();
            String op = p.getBenchmark().substring(p.getBenchmark().lastIndexOf('.') + 1);
            int tokens = Integer.parseInt(p.getParam("tokens"));
            boolean attention = op.equals("attention");
            int context = attention ? Integer.parseInt(p.getParam("context")) : 0;
            ModelConfig c = attention
                    ? TestModelPresets.withOverrides(TestModelPresets.gptOss20bWidths(2), null, 4, 1024)
                    : TestModelPresets.withOverrides(
                            TestModelPresets.gptOss20bWidths(1),
                            null,
                            Integer.parseInt(p.getParam("experts")),
                            Integer.parseInt(p.getParam("vocab")));
            double ms = r.getPrimaryResult().getScore();
            long bytes = OpBytes.of(op, c, tokens, context);
            sb.append(String.format(
                    Locale.ROOT,
                    "| %s | %s | %d | %s | %.4f | %.1f MB | %.2f |%n",
                    p.getParam("backend"),
                    op,
                    tokens,
                    attention ? Integer.toString(context) : "",
                    ms,
                    bytes / 1e6,
                    bytes / (ms / 1e3) / 1e9));
        }
        return sb.append(
                        "bytes read: the distinct bytes the op must read at least (weights as stored: BF16 dense, MXFP4 experts; F32 "
                                + "activations and KV cache); GB/s = bytes read / time.\n")
                .toString();
    }
}
