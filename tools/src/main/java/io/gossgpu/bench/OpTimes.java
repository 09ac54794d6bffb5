package io.gossgpu.bench;

import io.gossgpu.backend.Backend;
import io.gossgpu.backend.KvType;
import io.gossgpu.backend.LoadedWeights;
import io.gossgpu.cpu.CpuBackend;
import io.gossgpu.cpu.CpuJobTag;
import io.gossgpu.cpu.compute.CpuPool;
import io.gossgpu.forward.GraphOp;
import io.gossgpu.forward.OpKind;
import io.gossgpu.forward.OpObserver;
import io.gossgpu.model.ModelWeights;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * Where a step's time goes, op kind by op kind (summed over the layers): the wall time between one op's end and the
 * next's, taken by an {@link OpObserver} on the executor. An op's time is the gap since the previous op ended, so
 * EMBED also carries what happens between two steps (the caller's loop, the step's begin and end).
 *
 * <p>On the cpu backend the pool's jobs are profiled too ({@link CpuBackend#profile}): each op's time inside jobs,
 * the share of that core time no thread was reading (workers waking, the wait for the last chunk, single-chunk jobs
 * on the caller alone), and the MoE split into its gate/up and down phases and the rest (gathering, quantizing,
 * the weighted sum). For decode, each row gets the bytes it reads ({@link DecodeTraffic}), the GB/s that makes and
 * its share of the C streaming probe of the same run.
 *
 * <p>Paired with the probe ({@link #tokenProbed}): where the memory of a shared host changes speed from one minute to
 * the next, one probe per run says little about the run. A C probe pass between every two tokens gives each token
 * the mean of the passes just before and after it, and each row's share is taken against the time-weighted mean of
 * those (its bytes at the probe's speed over its time). What runs between a token's last op and the next probe pass
 * (the argmax on the caller) is then not counted.
 *
 * <p>A GPU backend queues its ops; with {@code synchronize} each op is waited for before it is timed, which serialises
 * what the device would overlap: the shares are right, the total is a little slower than the step unobserved.
 */
final class OpTimes implements OpObserver {
    private static final int TAGS = CpuPool.TAGS;

    private final Runnable synchronize;
    private final LongSupplier clock;
    /** The pool's counts (null off the cpu backend). */
    private final Supplier<CpuPool.Stats> pool;

    private final long[] nanos = new long[OpKind.values().length];
    /** Per op kind and pool tag: jobs, their wall time, the threads' busy time. */
    private final long[][] jobs = new long[OpKind.values().length][TAGS],
            wall = new long[OpKind.values().length][TAGS],
            busy = new long[OpKind.values().length][TAGS];

    private int threads = 1;
    /** Jobs a worker joined from a park, and the nanoseconds from their opening to its waking ({@link CpuPool.Stats#wakes}). */
    private long wakes, wakeNanos;

    private long last;
    private CpuPool.Stats lastStats;
    /** Tokens the timed steps processed (EMBED's rows). */
    private long tokens;
    /** Paired with the probe: the time since the last token mark per op kind (and job wall per tag), and the time
     * weighted by the probe around its token (ns × GB/s); the range of those probes, and the tokens whose two probes
     * differ by more than {@link #UNSTEADY}. */
    private final long[] pending = new long[OpKind.values().length];

    private final long[][] pendingWall = new long[OpKind.values().length][TAGS];
    private final double[] probed = new double[OpKind.values().length];
    private final double[][] probedWall = new double[OpKind.values().length][TAGS];
    private final KvType kv;
    private int pairedTokens, unsteadyTokens;
    private double probeLow = Double.POSITIVE_INFINITY, probeHigh;
    /** Two probes around a token that differ by more than this fraction of the lower one: the memory changed speed. */
    static final double UNSTEADY = 0.2;

    /** The profile of {@code backend}'s ops over a KV cache stored as {@code kv} (what attention's bytes count). */
    OpTimes(Backend backend, boolean synchronize, KvType kv) {
        this(
                synchronize ? backend::synchronize : null,
                System::nanoTime,
                backend instanceof CpuBackend cpu ? profiled(cpu) : null,
                kv);
    }

    /** {@code synchronize}: run before each op is timed (null: nothing); {@code pool}: the pool's counts, or null. */
    OpTimes(Runnable synchronize, LongSupplier clock, Supplier<CpuPool.Stats> pool) {
        this(synchronize, clock, pool, KvType.F32);
    }

    private OpTimes(Runnable synchronize, LongSupplier clock, Supplier<CpuPool.Stats> pool, KvType kv) {
        this.synchronize = synchronize;
        this.clock = clock;
        this.pool = pool;
        this.kv = kv;
    }

    private static Supplier<CpuPool.Stats> profiled(CpuBackend cpu) {
        cpu.profile(true);
        return cpu::poolStats;
    }

    /** A new, empty profile of the same backend. */
    OpTimes fresh() {
        return new OpTimes(synchronize, clock, pool, kv);
    }

    /** Forgets what was timed; the next op's time counts from now. */
    void reset() {
        Arrays.fill(nanos, 0);
        Arrays.fill(pending, 0);
        Arrays.fill(probed, 0);
        for (long[][] a : List.of(jobs, wall, busy, pendingWall)) for (long[] r : a) Arrays.fill(r, 0);
        for (double[] r : probedWall) Arrays.fill(r, 0);
        tokens = 0;
        wakes = wakeNanos = 0;
        pairedTokens = unsteadyTokens = 0;
        probeLow = Double.POSITIVE_INFINITY;
        probeHigh = 0;
        resume();
    }

    /** Goes on timing after a pause (other work ran since the last op): the next op's time counts from now. */
    void resume() {
        last = clock.getAsLong();
        lastStats = pool != null ? pool.get() : null;
    }

    @Override
    public void onOp(GraphOp op, int start, int rows, int cols, Supplier<float[]> values) {
        if (synchronize != null) synchronize.run();
        long now = clock.getAsLong();
        int k = op.kind().ordinal();
        nanos[k] += now - last;
        pending[k] += now - last;
        last = now;
        if (op.kind() == OpKind.EMBED) tokens += rows;
        if (pool != null) {
            CpuPool.Stats s = pool.get();
            if (lastStats != null) {
                CpuPool.Stats d = s.minus(lastStats);
                threads = d.threads();
                wakes += d.wakes();
                wakeNanos += d.wakeNanos();
                for (int t = 0; t < TAGS; t++) {
                    jobs[k][t] += d.jobs()[t];
                    wall[k][t] += d.wallNanos()[t];
                    busy[k][t] += d.busyNanos()[t];
                    pendingWall[k][t] += d.wallNanos()[t];
                }
            }
            lastStats = s;
        }
    }

    /**
     * Marks the end of a token timed between two probe passes ({@code before}, {@code after}, GB/s): what its ops took
     * since the last mark is weighted by their mean. Call {@link #resume} after the pass before the token starts.
     */
    void tokenProbed(double before, double after) {
        double p = (before + after) / 2;
        for (int k = 0; k < pending.length; k++) {
            probed[k] += pending[k] * p;
            pending[k] = 0;
            for (int t = 0; t < TAGS; t++) {
                probedWall[k][t] += pendingWall[k][t] * p;
                pendingWall[k][t] = 0;
            }
        }
        pairedTokens++;
        if (Math.abs(after - before) > UNSTEADY * Math.min(before, after)) unsteadyTokens++;
        probeLow = Math.min(probeLow, Math.min(before, after));
        probeHigh = Math.max(probeHigh, Math.max(before, after));
    }

    /**
     * One row of the profile, per token. {@code bytes}: what it reads per token (−1 when not a decode profile);
     * {@code gbPerSecond} and {@code ofProbe} (a fraction) follow from it and {@code ms} (0 without bytes or probe);
     * {@code jobMs}: the part of {@code ms} inside pool jobs, {@code idle}: the fraction of their core time that read
     * nothing (both −1 off the cpu backend); {@code probe}: the GB/s the share is against (paired: the time-weighted
     * mean of the probes around the row's tokens).
     */
    record Row(
            String op,
            double ms,
            double share,
            long bytes,
            double gbPerSecond,
            double ofProbe,
            double jobMs,
            double idle,
            double probe) {}

    /**
     * The rows, op kinds in the order a layer runs them (the MoE as "moe gate_up", "moe down" and "moe other" where
     * the pool was profiled), then "step" (their sum). For a decode run ({@code decodeFrom} ≥ 0, its first position,
     * {@code decodeTokens} long) with the bytes each reads; {@code probeGBps} &gt; 0 gives each its share of it.
     */
    List<Row> rows(ModelWeights w, LoadedWeights held, int decodeFrom, int decodeTokens, double probeGBps) {
        List<Row> rows = new ArrayList<>();
        long total = 0;
        for (long n : nanos) total += n;
        if (total == 0 || tokens == 0) return rows;
        boolean decode = decodeFrom >= 0;
        long allBytes = 0, allWall = 0, allBusy = 0;
        for (OpKind k : OpKind.values()) {
            int i = k.ordinal();
            long bytes = decode ? DecodeTraffic.meanBytesPerToken(w, held, decodeFrom, decodeTokens, k, kv) : -1;
            allBytes += Math.max(0, bytes);
            for (int t = 0; t < TAGS; t++) {
                allWall += wall[i][t];
                allBusy += busy[i][t];
            }
            if (k == OpKind.MOE && pool != null) {
                int gu = CpuJobTag.MOE_GATE_UP.tag(), dn = CpuJobTag.MOE_DOWN.tag();
                long guBytes = decode ? DecodeTraffic.moeBytesPerToken(w, held, true) : -1;
                long dnBytes = decode ? DecodeTraffic.moeBytesPerToken(w, held, false) : -1;
                long rest = nanos[i] - wall[i][gu] - wall[i][dn], restWall = 0, restBusy = 0;
                for (int t = 0; t < TAGS; t++)
                    if (t != gu && t != dn) {
                        restWall += wall[i][t];
                        restBusy += busy[i][t];
                    }
                double restProbed = probed[i] - probedWall[i][gu] - probedWall[i][dn];
                rows.add(row(
                        "moe gate_up",
                        wall[i][gu],
                        total,
                        guBytes,
                        probeFor(wall[i][gu], probedWall[i][gu], probeGBps),
                        wall[i][gu],
                        busy[i][gu]));
                rows.add(row(
                        "moe down",
                        wall[i][dn],
                        total,
                        dnBytes,
                        probeFor(wall[i][dn], probedWall[i][dn], probeGBps),
                        wall[i][dn],
                        busy[i][dn]));
                rows.add(row(
                        "moe other",
                        rest,
                        total,
                        decode ? bytes - guBytes - dnBytes : -1,
                        probeFor(rest, restProbed, probeGBps),
                        restWall,
                        restBusy));
                continue;
            }
            long kw = 0, kb = 0;
            for (int t = 0; t < TAGS; t++) {
                kw += wall[i][t];
                kb += busy[i][t];
            }
            rows.add(row(
                    k.name().toLowerCase(Locale.ROOT),
                    nanos[i],
                    total,
                    bytes,
                    probeFor(nanos[i], probed[i], probeGBps),
                    kw,
                    kb));
        }
        double allProbed = 0;
        for (double p : probed) allProbed += p;
        rows.add(row(
                "step", total, total, decode ? allBytes : -1, probeFor(total, allProbed, probeGBps), allWall, allBusy));
        return rows;
    }

    /** The probe a row of {@code nanos} is set against: paired, the time-weighted mean of its tokens' probes; else {@code probe}. */
    private double probeFor(long nanos, double probedNanos, double probe) {
        return pairedTokens > 0 && nanos > 0 ? probedNanos / nanos : probe;
    }

    /** Tokens marked by {@link #tokenProbed}, and how many of them saw the memory change speed. */
    int pairedTokens() {
        return pairedTokens;
    }

    int unsteadyTokens() {
        return unsteadyTokens;
    }

    private Row row(String name, long nanos, long total, long bytes, double probe, long jobWall, long jobBusy) {
        double ms = nanos / 1e6 / tokens;
        double gbps = bytes > 0 && ms > 0 ? bytes / (ms * 1e6) : 0;
        double jobMs = pool != null ? jobWall / 1e6 / tokens : -1;
        double idle = pool == null
                ? -1
                : jobWall > 0 ? Math.max(0, threads * jobWall - jobBusy) / (double) (threads * jobWall) : 0;
        return new Row(name, ms, (double) nanos / total, bytes, gbps, probe > 0 ? gbps / probe : 0, jobMs, idle, probe);
    }

    /** Pool jobs per token over the profile (0 off the cpu backend). */
    double jobsPerToken() {
        long n = 0;
        for (long[] r : jobs) for (long j : r) n += j;
        return tokens == 0 ? 0 : n / (double) tokens;
    }

    /** How many times per token a worker joined a job from a park instead of its spin (0 off the cpu backend). */
    double wakesPerToken() {
        return tokens == 0 ? 0 : wakes / (double) tokens;
    }

    /** Microseconds from a job's opening to a parked worker's waking, on average over {@link #wakesPerToken} (0 if none). */
    double meanWakeMicros() {
        return wakes == 0 ? 0 : wakeNanos / 1e3 / wakes;
    }

    /**
     * Prints the rows ({@link #rows}): ms per token and share of the step; on the cpu backend the time inside pool jobs
     * and the idle share of their core time; for decode the MB each reads per token, GB/s and share of {@code probeGBps}.
     */
    void print(
            PrintStream log,
            String test,
            ModelWeights w,
            LoadedWeights held,
            int decodeFrom,
            int decodeTokens,
            double probeGBps) {
        List<Row> rows = rows(w, held, decodeFrom, decodeTokens, probeGBps);
        if (rows.isEmpty()) return;
        boolean decode = decodeFrom >= 0,
                jobsShown = pool != null,
                paired = decode && pairedTokens > 0,
                probe = decode && (probeGBps > 0 || paired);
        String against = paired
                ? String.format(
                        Locale.ROOT,
                        " (GB/s against the C probe passes around each token: %.1f-%.1f GB/s; "
                                + "%d of %d tokens saw the memory change speed by more than %.0f %%)",
                        probeLow,
                        probeHigh,
                        unsteadyTokens,
                        pairedTokens,
                        100 * UNSTEADY)
                : probe ? String.format(Locale.ROOT, " (GB/s against the probe's %.1f GB/s)", probeGBps) : "";
        log.printf(
                Locale.ROOT,
                "%s, time per op kind over %d tokens%s:%n  %-13s %9s %6s%s%s%n",
                test,
                tokens,
                against,
                "op",
                "ms/token",
                "share",
                jobsShown ? String.format(Locale.ROOT, " %8s %6s", "in jobs", "idle") : "",
                decode
                        ? String.format(
                                Locale.ROOT,
                                " %10s %8s%s%s",
                                "MB/token",
                                "GB/s",
                                probe ? String.format(Locale.ROOT, " %8s", "of probe") : "",
                                paired ? String.format(Locale.ROOT, " %6s", "probe") : "")
                        : "");
        for (Row r : rows) {
            String jobs = jobsShown ? String.format(Locale.ROOT, " %8.3f %5.1f%%", r.jobMs, 100 * r.idle) : "";
            // the share with a decimal: one just under a line (79.6 %) must not print as on it
            String traffic = decode
                    ? String.format(
                            Locale.ROOT,
                            " %10.2f %8.1f%s%s",
                            r.bytes / 1e6,
                            r.gbPerSecond,
                            probe ? String.format(Locale.ROOT, " %7.1f%%", 100 * r.ofProbe) : "",
                            paired ? String.format(Locale.ROOT, " %6.1f", r.probe) : "")
                    : "";
            log.printf(Locale.ROOT, "  %-13s %9.3f %5.1f%%%s%s%n", r.op, r.ms, 100 * r.share, jobs, traffic);
        }
        if (jobsShown) {
            Row step = rows.get(rows.size() - 1);
            log.printf(
                    Locale.ROOT,
                    "  pool: %.0f jobs per token (fork/join); %.3f ms/token outside jobs (the calling thread alone: "
                            + "between ops, top-k, argmax, short ops); idle: core time in jobs no thread read in%n",
                    jobsPerToken(),
                    step.ms - step.jobMs);
            log.printf(
                    Locale.ROOT,
                    "  pool: a worker joined %.1f jobs per token from a park (its spin had run out), %.0f µs on average "
                            + "after the job opened%n",
                    wakesPerToken(),
                    meanWakeMicros());
        }
    }
}
