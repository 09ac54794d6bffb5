package io.gossgpu.server;

import io.gossgpu.Timings;
import io.gossgpu.api.StepStats;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.Unit;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.function.Supplier;

/**
 * {@code GET /metrics} in Prometheus text format (Prometheus Java client), one registry per server: requests by
 * endpoint and status, their durations, prompt/completion/cached tokens, time to first token, decode rate,
 * cancelled (client left) and aborted (shutdown) generations, and gauges read at scrape time: slots, busy slots,
 * queue depth, KV cache tokens in use and capacity, model ready, draining; and the engine's batched steps with the
 * sequences and token rows they held (sequences ÷ steps: how many streams a step served on average).
 */
final class ServerMetrics {
    /** What the gauges read when scraped. */
    interface State {
        GossServer.Stats stats();

        int kvCacheUsedTokens();

        int kvCacheCapacityTokens();

        boolean draining();
        /** The engine's batched steps so far (zeros before the model is loaded). */
        StepStats steps();
        /** The backend's work counters ({@link io.gossgpu.backend.Backend#counters()}; empty before the model is loaded). */
        java.util.SortedMap<String, Long> backendCounters();
    }

    private final PrometheusRegistry registry = new PrometheusRegistry();
    private final PrometheusTextFormatWriter writer = PrometheusTextFormatWriter.create();
    private final Counter requests, promptTokens, completionTokens, cachedTokens, cancelled, aborted;
    private final Histogram duration, timeToFirstToken, decodeRate;

    ServerMetrics(State state) {
        requests = Counter.builder()
                .name("goss_http_requests_total")
                .help("HTTP requests answered, by endpoint and status")
                .labelNames("endpoint", "status")
                .register(registry);
        duration = Histogram.builder()
                .name("goss_http_request_duration_seconds")
                .unit(Unit.SECONDS)
                .help("Time from a request's arrival to the end of its response (streams included)")
                .labelNames("endpoint")
                .classicOnly()
                .classicUpperBounds(0.005, 0.025, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300)
                .register(registry);
        promptTokens = Counter.builder()
                .name("goss_prompt_tokens_total")
                .help("Prompt tokens of generations")
                .register(registry);
        cachedTokens = Counter.builder()
                .name("goss_prompt_cached_tokens_total")
                .help("Prompt tokens served from a slot's KV cache instead of prefilled")
                .register(registry);
        completionTokens = Counter.builder()
                .name("goss_completion_tokens_total")
                .help("Tokens generated")
                .register(registry);
        timeToFirstToken = Histogram.builder()
                .name("goss_time_to_first_token_seconds")
                .unit(Unit.SECONDS)
                .help("From the start of a generation's prefill to its first token")
                .classicOnly()
                .classicUpperBounds(0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60)
                .register(registry);
        decodeRate = Histogram.builder()
                .name("goss_decode_tokens_per_second")
                .help("Decode speed of each generation (tokens after the first)")
                .classicOnly()
                .classicUpperBounds(1, 2, 5, 10, 20, 30, 50, 75, 100, 150, 200, 400)
                .register(registry);
        cancelled = Counter.builder()
                .name("goss_generations_cancelled_total")
                .help("Generations cancelled because the client went away")
                .register(registry);
        aborted = Counter.builder()
                .name("goss_generations_aborted_total")
                .help("Generations ended by the server's shutdown before they were complete")
                .register(registry);
        gauge(
                "goss_slots",
                "Slots (requests generated at once)",
                () -> state.stats().slots());
        gauge("goss_slots_busy", "Slots generating now", () -> state.stats().busySlots());
        gauge(
                "goss_queue_depth",
                "Requests waiting for a slot",
                () -> state.stats().queued());
        gauge("goss_kv_cache_used_tokens", "Tokens held in the slots' KV caches", state::kvCacheUsedTokens);
        gauge("goss_kv_cache_capacity_tokens", "Tokens the slots' KV caches can hold", state::kvCacheCapacityTokens);
        gauge(
                "goss_model_ready",
                "1 once the model is loaded and the server accepts requests",
                () -> state.stats().ready() && !state.draining() ? 1 : 0);
        counter(
                "goss_batch_steps_total",
                "Forward passes the engine ran (continuous batching: one serves every running sequence)",
                () -> state.steps().steps());
        counter(
                "goss_batch_sequences_total",
                "Sequences the forward passes served, summed over the passes",
                () -> state.steps().sequences());
        counter(
                "goss_batch_rows_total",
                "Token rows the forward passes processed (decode tokens and prompt chunks)",
                () -> state.steps().rows());
        CounterWithCallback.builder()
                .name("goss_backend_work_total")
                .labelNames("counter")
                .help(
                        "How the backend's work ran, by counter: cuda graph_captures, graph_launches, kernel_launches (one by one), "
                                + "attention_gqa_calls, moe_tiled_calls; metal command_buffers, gpu_microseconds")
                .callback(cb -> state.backendCounters().forEach((name, n) -> cb.call(n.doubleValue(), name)))
                .register(registry);
        gauge(
                "goss_draining",
                "1 while the server shuts down (finishing running requests)",
                () -> state.draining() ? 1 : 0);
    }

    private void counter(String name, String help, Supplier<Number> value) {
        CounterWithCallback.builder()
                .name(name)
                .help(help)
                .callback(cb -> cb.call(value.get().doubleValue()))
                .register(registry);
    }

    private void gauge(String name, String help, Supplier<Number> value) {
        GaugeWithCallback.builder()
                .name(name)
                .help(help)
                .callback(cb -> cb.call(value.get().doubleValue()))
                .register(registry);
    }

    /** One answered request ({@code endpoint} a route pattern, never a raw path: the label set stays small). */
    void request(String endpoint, int status, double seconds) {
        requests.labelValues(endpoint, String.valueOf(status)).inc();
        duration.labelValues(endpoint).observe(seconds);
    }

    /** One generation's numbers. */
    void generation(Generation.Outcome o) {
        promptTokens.inc(o.promptTokens());
        cachedTokens.inc(o.cachedTokens());
        completionTokens.inc(o.completionTokens());
        if (o.clientGone()) cancelled.inc();
        if (o.aborted()) aborted.inc();
        Timings t = o.timings();
        if (t != null && o.completionTokens() > 0) {
            timeToFirstToken.observe(t.timeToFirstTokenMs() / 1000);
            if (t.decodedTokens() > 0) decodeRate.observe(t.decodeTokensPerSecond());
        }
    }

    String contentType() {
        return writer.getContentType();
    }

    String scrape() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try {
            writer.write(out, registry.scrape());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toString(java.nio.charset.StandardCharsets.UTF_8);
    }
}
