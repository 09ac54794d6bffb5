package io.gossgpu.bench;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.util.List;
import java.util.Locale;

/**
 * What {@link Bench} measured: a header (model, backend, threads, CPU flags, read bandwidth) and one row per
 * test, as a markdown table or as JSON.
 *
 * @param threads       the cpu backend's threads (1 for the reference backend)
 * @param bandwidth     the read bandwidth a Java loop measured in this run ({@link ReadBandwidth}), or null
 * @param streamProbe   the read bandwidth the plain C streaming probe measured in this run ({@link StreamProbe}), or null
 * @param ceilingGBps   the bandwidth decode is compared with (the C probe's where it ran, else the Java probe's, or
 *                      the one given); 0 when none
 * @param warmups       untimed runs of each test before its {@code reps} timed ones
 */
public record BenchReport(
        String model,
        String backend,
        String device,
        int threads,
        CpuFeatures cpu,
        ReadBandwidth.Result bandwidth,
        ReadBandwidth.Result streamProbe,
        double ceilingGBps,
        int warmups,
        int reps,
        List<Row> rows) {
    public BenchReport {
        rows = List.copyOf(rows);
    }

    /**
     * One test. {@code tokensPerSecond} is the mean over the repetitions ({@code samples}, in the order run),
     * {@code stddev} their sample standard deviation; {@code perCpuTime}: tokens ÷ (process CPU time ÷ threads) of the best repetition (0 if unknown).
     * Decode rows also carry the mean bytes a token reads, the GB/s that makes, and its percentage of the
     * bandwidth ceiling (0 without one). {@code streams}: 0 for the plain tests; for those of {@code -np}, the sequences
     * decoding side by side, whose t/s is the aggregate of all of them (GB/s is not given: they share reads).
     */
    public record Row(
            String test,
            int nPrompt,
            int nGen,
            int depth,
            double tokensPerSecond,
            double stddev,
            double median,
            List<Double> samples,
            double perCpuTime,
            long bytesPerToken,
            double gbPerSecond,
            double percentOfBandwidth,
            int streams) {
        public Row {
            samples = List.copyOf(samples);
        }
    }

    /** llama-bench's test names: "pp512", "tg32", "pp512 @ d8192". */
    public static String testName(int nPrompt, int nGen, int depth) {
        String t = nGen == 0 ? "pp" + nPrompt : nPrompt == 0 ? "tg" + nGen : "pp" + nPrompt + "+tg" + nGen;
        return depth > 0 ? t + " @ d" + depth : t;
    }

    /** The header lines, the table, and what its columns mean. */
    public String markdown() {
        StringBuilder sb = new StringBuilder();
        sb.append("model: ")
                .append(model)
                .append(" · backend: ")
                .append(backend)
                .append(" (")
                .append(device)
                .append(')');
        if (backend.equals("cpu")) sb.append(" · ").append(threads).append(threads == 1 ? " thread" : " threads");
        sb.append('\n').append("cpu: ").append(cpu.describe()).append('\n');
        if (bandwidth != null)
            sb.append("read bandwidth (Java probe): ")
                    .append(bandwidth.describe())
                    .append('\n');
        if (streamProbe != null)
            sb.append("C streaming probe: ").append(streamProbe.describe()).append('\n');
        if (bandwidth == null && streamProbe == null && ceilingGBps > 0)
            sb.append(String.format(Locale.ROOT, "bandwidth: %.1f GB/s (given with --bandwidth)%n", ceilingGBps));
        sb.append('\n');
        boolean pct = ceilingGBps > 0, streams = rows.stream().anyMatch(r -> r.streams > 0);
        sb.append("| model | backend | test | t/s | t/s per CPU time | bytes/token | GB/s |")
                .append(pct ? (streamProbe != null ? " of C probe |" : " of bandwidth |") : "")
                .append(streams ? " vs 1 stream |" : "")
                .append('\n');
        sb.append("|---|---|---|---:|---:|---:|---:|")
                .append(pct ? "---:|" : "")
                .append(streams ? "---:|" : "")
                .append('\n');
        for (Row r : rows) {
            boolean tg = r.bytesPerToken > 0 && r.streams == 0;
            sb.append(String.format(
                    Locale.ROOT,
                    "| %s | %s | %s | %.2f ± %.2f | %s | %s | %s |",
                    model,
                    backend,
                    r.test,
                    r.tokensPerSecond,
                    r.stddev,
                    r.perCpuTime > 0 ? String.format(Locale.ROOT, "%.2f", r.perCpuTime) : "",
                    tg ? String.format(Locale.ROOT, "%.3f GB", r.bytesPerToken / 1e9) : "",
                    tg ? String.format(Locale.ROOT, "%.1f", r.gbPerSecond) : ""));
            if (pct)
                sb.append(
                        tg
                                ? String.format(
                                        Locale.ROOT,
                                        " %.0f %% (ceiling %.1f t/s) |",
                                        r.percentOfBandwidth,
                                        ceilingGBps * 1e9 / r.bytesPerToken)
                                : " |");
            if (streams) sb.append(ratioToOneStream(r));
            sb.append('\n');
        }
        sb.append(String.format(
                Locale.ROOT,
                "%nt/s: wall clock, mean ± sample stddev over %d timed runs after %d untimed (JIT warm-up).",
                reps,
                warmups));
        if (streams)
            sb.append(
                    "\ntgN xS: S streams of N tokens each decoding side by side, batched into shared steps; t/s is their\n"
                            + "aggregate, and \"vs 1 stream\" its ratio to tgN x1 of this run (1 stream through the same scheduler).");
        sb.append("\nt/s per CPU time: tokens ÷ (process CPU time ÷ threads),\n"
                + "best repetition: an estimate of the wall clock if no other process competed for the cores (JIT, GC and\n"
                + "spin-waiting count against it; idle workers in serial phases flatter it). Equal on an idle machine.\n"
                + "bytes/token: what a decoded token must read (active experts, every other weight, the unembedding, the KV\n"
                + "cache at its position), from the tensor sizes as the backend holds them (the cpu backend's float dense\n"
                + "weights as Q8_0); GB/s = bytes/token × t/s.\n");
        return sb.toString();
    }

    /** " 2.31× |" for a row of streams against the one-stream row of the same test in this report, else " |". */
    private String ratioToOneStream(Row r) {
        if (r.streams == 0) return " |";
        for (Row one : rows)
            if (one.streams == 1 && one.nGen == r.nGen && one.depth == r.depth && one.tokensPerSecond > 0)
                return String.format(Locale.ROOT, " %.2f× |", r.tokensPerSecond / one.tokensPerSecond);
        return " |";
    }

    /** The same as JSON (one object; the rows under "rows"). */
    public String json() {
        try {
            return new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValueAsString(this) + "\n";
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("bench report to JSON", e);
        }
    }
}
