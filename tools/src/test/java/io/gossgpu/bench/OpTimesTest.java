package io.gossgpu.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.gossgpu.cpu.CpuJobTag;
import io.gossgpu.cpu.compute.CpuPool;
import io.gossgpu.forward.GraphOp;
import io.gossgpu.forward.OpKind;
import io.gossgpu.model.Checkpoint;
import io.gossgpu.model.ModelWeights;
import io.gossgpu.testmodel.TestModelGenerator;
import io.gossgpu.testmodel.TestModelPresets;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The arithmetic of {@code bench --op-times}'s table, driven by a made-up clock and made-up pool counts over the
 * tiny preset (3 layers, 4 of 6 experts per token; shapes in {@link DecodeTrafficTest}): each row's bytes against a
 * hand count, its ms per token, GB/s, share of the probe and idle share against the times fed in. No speed is measured.
 */
class OpTimesTest {
    /** Nanoseconds each op takes per layer (or per step for EMBED, FINAL_NORM, LOGITS) in the made-up run. */
    static final Map<OpKind, Long> NANOS = Map.ofEntries(
            Map.entry(OpKind.EMBED, 100L),
            Map.entry(OpKind.ATTN_NORM, 10L),
            Map.entry(OpKind.QKV_ROPE, 400L),
            Map.entry(OpKind.ATTENTION, 200L),
            Map.entry(OpKind.ATTN_OUT, 150L),
            Map.entry(OpKind.ATTN_RESIDUAL, 5L),
            Map.entry(OpKind.MLP_NORM, 10L),
            Map.entry(OpKind.ROUTER, 30L),
            Map.entry(OpKind.MOE, 1000L),
            Map.entry(OpKind.MOE_RESIDUAL, 5L),
            Map.entry(OpKind.FINAL_NORM, 10L),
            Map.entry(OpKind.LOGITS, 4000L));

    /** A 2-thread pool whose counts the test moves by hand. */
    static final class FakePool {
        final long[] jobs = new long[CpuPool.TAGS], wall = new long[CpuPool.TAGS], busy = new long[CpuPool.TAGS];
        long wakes, wakeNanos;

        void job(CpuJobTag tag, long wallNanos, long busyNanos) {
            jobs[tag.tag()]++;
            wall[tag.tag()] += wallNanos;
            busy[tag.tag()] += busyNanos;
        }

        CpuPool.Stats stats() {
            return new CpuPool.Stats(2, jobs.clone(), wall.clone(), busy.clone(), wakes, wakeNanos);
        }
    }

    /** The made-up clock, pool and profile of a test (JUnit makes them anew for each). */
    private final long[] now = {1_000_000};

    private final FakePool pool = new FakePool();
    private final OpTimes t = new OpTimes(null, () -> now[0], pool::stats);

    @Test
    void decodeRowsGiveEachOpItsBytesTimeBandwidthShareOfTheProbeAndIdleCoreTime() {
        try (Checkpoint ck = new TestModelGenerator(TestModelPresets.tiny(), 3).inMemory()) {
            ModelWeights w = ModelWeights.of(ck);
            t.reset();
            for (int token = 0; token < 2; token++) token(t, now, pool);
            double probe = 10.0; // GB/s
            List<OpTimes.Row> rows = t.rows(w, null, 10, 2, probe);
            assertEquals(
                    List.of(
                            "embed",
                            "attn_norm",
                            "qkv_rope",
                            "attention",
                            "attn_out",
                            "attn_residual",
                            "mlp_norm",
                            "router",
                            "moe gate_up",
                            "moe down",
                            "moe other",
                            "moe_residual",
                            "final_norm",
                            "logits",
                            "step"),
                    rows.stream().map(OpTimes.Row::op).toList());
            Map<String, OpTimes.Row> by = rows.stream().collect(Collectors.toMap(OpTimes.Row::op, Function.identity()));

            // the experts, by hand (OpenAI layout, as in DecodeTrafficTest): per layer 4 experts' gate and up, 160 rows
            // each of
            // 96 FP4 codes (48 B) and 3 scale bytes, with BF16 biases; down, 96 rows of 160 codes (80 B) and 5 scale
            // bytes, bias
            long gateUp = 3 * 4 * (2 * (160 * 48 + 160 * 3 + 160 * 2)), down = 3 * 4 * (96 * 80 + 96 * 5 + 96 * 2);
            assertRow(by.get("moe gate_up"), 3 * 300e-6, gateUp, probe, 3 * 300e-6, 1 / 6.0);
            assertRow(by.get("moe down"), 3 * 200e-6, down, probe, 3 * 200e-6, 0);
            // the rest of the MoE's 1000 ns per layer: 500 ns, of which a 50 ns job on the caller alone (half the cores
            // idle)
            assertRow(by.get("moe other"), 3 * 500e-6, 0, probe, 3 * 50e-6, 0.5);
            assertRow(by.get("logits"), 4000e-6, 1031L * 96 * 2, probe, 3000e-6, 1 / 6.0);
            assertRow(by.get("qkv_rope"), 3 * 400e-6, 3 * (320 * 96 * 2 + 320 * 2), probe, 3 * 300e-6, 0.25);
            assertRow(by.get("attn_norm"), 3 * 10e-6, 3 * 96 * 2, probe, 0, 0);
            // attention reads the sinks and the KV of positions 10 and 11, on average
            assertRow(
                    by.get("attention"),
                    3 * 200e-6,
                    3 * 16 * 2 + (DecodeTrafficTest.kv(10) + DecodeTrafficTest.kv(11)) / 2,
                    probe,
                    0,
                    0);
            long stepNanos = 100 + 3 * (10 + 400 + 200 + 150 + 5 + 10 + 30 + 1000 + 5) + 10 + 4000;
            long stepJobs = 3 * (300 + 300 + 200 + 50) + 3000, stepBusy = 3 * (450 + 500 + 400 + 50) + 5000;
            assertEquals(3.0, t.wakesPerToken(), 1e-12, "one wake-up per layer");
            assertEquals(40.0, t.meanWakeMicros(), 1e-9);
            assertRow(
                    by.get("step"),
                    stepNanos / 1e6,
                    DecodeTraffic.meanBytesPerToken(w, null, 10, 2),
                    probe,
                    stepJobs / 1e6,
                    (2.0 * stepJobs - stepBusy) / (2.0 * stepJobs));
            assertEquals(
                    1.0,
                    rows.stream()
                            .filter(r -> !r.op().equals("step"))
                            .mapToDouble(OpTimes.Row::share)
                            .sum(),
                    1e-12);
            assertEquals(4000.0 / stepNanos, by.get("logits").share(), 1e-12);
            // jobs per token: qkv, gate_up, down, the caller-alone one per layer, and the logits
            assertEquals(3 * 4 + 1, t.jobsPerToken(), 1e-12);
        }
    }

    @Test
    void pairedWithProbesEachRowIsSetAgainstTheTimeWeightedProbesAroundItsTokens() {
        try (Checkpoint ck = new TestModelGenerator(TestModelPresets.tiny(), 3).inMemory()) {
            ModelWeights w = ModelWeights.of(ck);
            t.reset();
            // probes 10, 20, 30, 30 GB/s between the tokens: token 0 runs at 15 (a speed change), 1 at 25, 2 at 30;
            // token 0 alone is slow (logits twice as long): its rows weigh its probe by their time
            double[] probes = {10, 20, 30, 30};
            for (int token = 0; token < 3; token++) {
                now[0] += 1_000_000_000; // the probe pass: not counted after resume
                t.resume();
                token(t, now, pool);
                if (token == 0) {
                    now[0] += 4000;
                    t.onOp(new GraphOp(OpKind.LOGITS, -1), 0, 1, 1, null);
                }
                t.tokenProbed(probes[token], probes[token + 1]);
            }
            assertEquals(3, t.pairedTokens());
            assertEquals(2, t.unsteadyTokens(), "10 → 20 and 20 → 30 differ by more than 20 %; 30 → 30 does not");
            Map<String, OpTimes.Row> by =
                    t.rows(w, null, 10, 3, 99).stream().collect(Collectors.toMap(OpTimes.Row::op, Function.identity()));
            // an op as long in every token: the plain mean of 15, 25 and 30
            assertEquals((15 + 25 + 30) / 3.0, by.get("qkv_rope").probe(), 1e-9);
            assertEquals(
                    (15 + 25 + 30) / 3.0, by.get("moe gate_up").probe(), 1e-9, "job wall time weighs the MoE phases");
            assertEquals((15 + 25 + 30) / 3.0, by.get("moe other").probe(), 1e-9);
            // logits: 8000 ns in token 0, 4000 in the others
            assertEquals(
                    (8000 * 15 + 4000 * 25 + 4000 * 30) / 16000.0,
                    by.get("logits").probe(),
                    1e-9);
            OpTimes.Row logits = by.get("logits");
            assertEquals(logits.gbPerSecond() / logits.probe(), logits.ofProbe(), 1e-12);
            long step = 100 + 3 * (10 + 400 + 200 + 150 + 5 + 10 + 30 + 1000 + 5) + 10 + 4000;
            assertEquals(
                    ((step + 4000) * 15 + step * 25 + step * 30) / (3.0 * step + 4000),
                    by.get("step").probe(),
                    1e-9);
            assertEquals(16000e-6 / 3, logits.ms(), 1e-12, "the probe passes between tokens are not counted");
            // reset forgets the pairing: the run's probe again
            t.reset();
            assertEquals(0, t.pairedTokens());
        }
    }

    @Test
    void offTheCpuBackendTheMoeIsOneRowAndNoJobsAreShown() {
        OpTimes gpu = new OpTimes(null, () -> now[0], null); // no pool: a GPU backend's profile
        try (Checkpoint ck = new TestModelGenerator(TestModelPresets.tiny(), 3).inMemory()) {
            ModelWeights w = ModelWeights.of(ck);
            gpu.reset();
            for (OpKind k : OpKind.values()) {
                now[0] += 1000;
                gpu.onOp(new GraphOp(k, 0), 0, 1, 1, null);
            }
            List<OpTimes.Row> rows = gpu.rows(w, null, 0, 1, 0);
            assertEquals(OpKind.values().length + 1, rows.size());
            OpTimes.Row moe = rows.get(OpKind.MOE.ordinal());
            assertEquals("moe", moe.op());
            assertEquals(DecodeTraffic.bytesPerToken(w, null, 0, OpKind.MOE), moe.bytes());
            assertEquals(-1, moe.jobMs());
            assertEquals(0, moe.ofProbe(), "no probe, no share");
            // a prefill profile has no bytes
            assertEquals(-1, gpu.rows(w, null, -1, 0, 0).get(0).bytes());
        }
    }

    /** One decode token of the 3-layer preset: every op of every layer, as the executor reports them. */
    private static void token(OpTimes t, long[] now, FakePool pool) {
        step(t, now, pool, OpKind.EMBED, -1);
        for (int l = 0; l < 3; l++)
            for (OpKind k : List.of(
                    OpKind.ATTN_NORM,
                    OpKind.QKV_ROPE,
                    OpKind.ATTENTION,
                    OpKind.ATTN_OUT,
                    OpKind.ATTN_RESIDUAL,
                    OpKind.MLP_NORM,
                    OpKind.ROUTER,
                    OpKind.MOE,
                    OpKind.MOE_RESIDUAL)) step(t, now, pool, k, l);
        step(t, now, pool, OpKind.FINAL_NORM, -1);
        step(t, now, pool, OpKind.LOGITS, -1);
    }

    /** Advances the clock by the op's time, with the pool jobs the made-up op ran. */
    private static void step(OpTimes t, long[] now, FakePool pool, OpKind k, int layer) {
        switch (k) {
            case QKV_ROPE -> {
                pool.job(CpuJobTag.OTHER, 300, 450);
                // the first job of each layer found the worker parked, 40 µs to wake
                pool.wakes++;
                pool.wakeNanos += 40_000;
            }
            case MOE -> {
                pool.job(CpuJobTag.MOE_GATE_UP, 300, 500);
                pool.job(CpuJobTag.MOE_DOWN, 200, 400);
                pool.job(CpuJobTag.OTHER, 50, 50);
            }
            case LOGITS -> pool.job(CpuJobTag.OTHER, 3000, 5000);
            default -> {}
        }
        now[0] += NANOS.get(k);
        t.onOp(new GraphOp(k, layer), 0, 1, 1, null);
    }

    /** Per token over the two tokens: ms, bytes, GB/s = bytes / ms / 10^6, its share of the probe, ms in jobs, idle share. */
    private static void assertRow(OpTimes.Row r, double ms, long bytes, double probe, double jobMs, double idle) {
        assertEquals(ms, r.ms(), 1e-12, r.op());
        assertEquals(bytes, r.bytes(), r.op());
        double gbps = bytes == 0 ? 0 : bytes / (ms * 1e6);
        assertEquals(gbps, r.gbPerSecond(), 1e-9 * Math.max(1, gbps), r.op());
        assertEquals(gbps / probe, r.ofProbe(), 1e-9, r.op());
        assertEquals(jobMs, r.jobMs(), 1e-12, r.op());
        assertEquals(idle, r.idle(), 1e-12, r.op());
    }
}
