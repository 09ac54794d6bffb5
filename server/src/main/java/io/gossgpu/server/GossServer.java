package io.gossgpu.server;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.gossgpu.GossException;
import io.gossgpu.api.Engine;
import io.gossgpu.api.StepStats;
import io.gossgpu.backend.KvCacheSpec;
import io.javalin.Javalin;
import io.javalin.http.Context;
import io.javalin.http.HandlerType;
import java.io.IOException;
import java.io.InputStream;
import java.nio.channels.ServerSocketChannel;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.eclipse.jetty.server.ServerConnector;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The OpenAI-compatible HTTP server: {@code GET /health} (also {@code /health/live} and {@code /health/ready}),
 * {@code GET /metrics}, {@code GET /v1/models}, {@code POST /v1/chat/completions}, {@code POST /v1/completions},
 * {@code POST /v1/responses} and {@code GET}/{@code DELETE /v1/responses/{id}}, on Javalin (Jetty, see
 * {@link JettySetup}) behind a {@link BrowserGuard}. The model loads in the background after the server starts; until
 * it is ready the API answers 503. Requests run on a {@link SlotPool}. {@link #close()} drains: it stops accepting,
 * lets running requests finish for up to {@link ServerOptions#drainTimeoutMs()}, then ends the rest with an error.
 */
public final class GossServer implements AutoCloseable {
    /** Counters for monitoring and for tests that check nothing leaks. */
    public record Stats(
            boolean ready,
            int slots,
            int busySlots,
            int queued,
            int openSessions,
            long requests,
            long rejected,
            long cancelled) {}

    static final Logger LOG = LoggerFactory.getLogger("goss.server");

    final ServerOptions options;
    final long created = System.currentTimeMillis() / 1000;
    private final Javalin app;
    private final ServerSocketChannel channel;
    private final AtomicReference<ServerConnector> connector = new AtomicReference<>();
    private final ServerMetrics metrics;
    private final byte[] keyDigest;
    private final CountDownLatch loaded = new CountDownLatch(1), stopped = new CountDownLatch(1);
    private volatile Engine engine;
    private volatile SlotPool pool;
    private volatile String loadError;
    private volatile boolean closed, draining;
    /** The bound port, kept for after the socket is closed. */
    private volatile int port;

    final AtomicLong requests = new AtomicLong(), rejected = new AtomicLong(), cancelled = new AtomicLong();
    private final ChatCompletionsApi chatApi = new ChatCompletionsApi(this);
    private final CompletionsApi completionsApi = new CompletionsApi(this);
    private final ResponsesApi responsesApi;
    private final Thread loader;

    private GossServer(ServerOptions options, Supplier<Engine> engineLoader) {
        this.options = options;
        this.keyDigest = options.apiKey() == null ? null : sha256(options.apiKey());
        this.responsesApi = new ResponsesApi(this, options.storedResponses());
        this.metrics = new ServerMetrics(new ServerMetrics.State() {
            @Override
            public Stats stats() {
                return GossServer.this.stats();
            }

            @Override
            public int kvCacheUsedTokens() {
                SlotPool p = pool;
                return p == null ? 0 : p.cachedTokens();
            }

            @Override
            public int kvCacheCapacityTokens() {
                SlotPool p = pool;
                return (p == null ? options.parallel() : p.cachesInBudget()) * options.contextLength();
            }

            @Override
            public boolean draining() {
                return draining;
            }

            @Override
            public StepStats steps() {
                Engine e = engine;
                return e == null ? new StepStats(0, 0, 0) : e.stepStats();
            }

            @Override
            public java.util.SortedMap<String, Long> backendCounters() {
                Engine e = engine;
                return e == null ? java.util.Collections.emptySortedMap() : e.backendCounters();
            }
        });
        this.channel = JettySetup.bind(options);
        this.app = Javalin.create(cfg -> {
            cfg.showJavalinBanner = false;
            cfg.startupWatcherEnabled = false;
            cfg.http.maxRequestSize = options.maxBodyBytes();
            cfg.http.disableCompression();
            cfg.http.prefer405over404 = true;
            cfg.router.ignoreTrailingSlashes = true;
            JettySetup.configure(cfg, options, channel, new AccessLog(metrics), connector::set);
            if (options.corsOrigins() != null) {
                cfg.bundledPlugins.enableCors(cors -> cors.addRule(rule -> {
                    if (options.corsOrigins().equals("*")) rule.anyHost();
                    else {
                        String[] origins = options.corsOrigins().split("\\s*,\\s*");
                        rule.allowHost(origins[0], java.util.Arrays.copyOfRange(origins, 1, origins.length));
                    }
                }));
            }
        });
        BrowserGuard guard = new BrowserGuard(options);
        app.before(ctx -> {
            guard.check(ctx);
            if (draining) ctx.header("Connection", "close"); // clients reconnect elsewhere
        });
        app.before("/v1/*", this::authorize);
        app.get("/health", this::health);
        app.get("/health/ready", this::health);
        app.get("/health/live", ctx -> json(ctx, 200, Json.object().put("status", "live")));
        app.get("/metrics", ctx -> {
            ctx.contentType(metrics.contentType());
            ctx.result(metrics.scrape());
        });
        app.get("/v1/models", ctx -> json(ctx, 200, modelList()));
        app.get("/v1/models/{id}", ctx -> {
            requireReady();
            if (!ctx.pathParam("id").equals(options.modelId())) throw unknownModel(ctx.pathParam("id"));
            json(ctx, 200, modelObject());
        });
        app.post("/v1/chat/completions", ctx -> chatApi.handle(ctx, body(ctx)));
        app.post("/v1/completions", ctx -> completionsApi.handle(ctx, body(ctx)));
        app.post("/v1/responses", ctx -> responsesApi.handle(ctx, body(ctx)));
        app.get("/v1/responses/{id}", ctx -> responsesApi.retrieve(ctx, ctx.pathParam("id")));
        app.delete("/v1/responses/{id}", ctx -> responsesApi.delete(ctx, ctx.pathParam("id")));
        app.exception(ApiError.class, (e, ctx) -> error(ctx, e));
        app.exception(
                io.javalin.http.HttpResponseException.class,
                (e, ctx) -> error(
                        ctx,
                        new ApiError(
                                e.getStatus(),
                                e.getStatus() >= 500 ? "server_error" : "invalid_request_error",
                                e.getStatus() == 404 ? "not_found" : null,
                                null,
                                e.getStatus() == 404
                                        ? "no such endpoint: " + ctx.method() + " " + ctx.path()
                                        : e.getMessage(),
                                null)));
        app.exception(SlotPool.Full.class, (e, ctx) -> {
            rejected.incrementAndGet();
            error(
                    ctx,
                    new ApiError(
                            429,
                            "rate_limit_error",
                            "server_busy",
                            null,
                            (options.parallel() == 1
                                            ? "the slot is busy"
                                            : "all " + options.parallel() + " slots are busy")
                                    + " and " + options.queue() + " requests are waiting; retry later",
                            "1"));
        });
        app.exception(Exception.class, (e, ctx) -> {
            if (e instanceof GossException g) {
                LOG.warn("request failed: {}", g.getMessage());
                error(ctx, new ApiError(500, "server_error", null, null, g.getMessage(), null));
            } else {
                LOG.error("request failed", e);
                error(ctx, new ApiError(500, "server_error", null, null, "internal error: " + e, null));
            }
        });
        app.error(404, ctx -> {
            if (ctx.result() == null || ctx.result().isEmpty())
                error(
                        ctx,
                        new ApiError(
                                404,
                                "invalid_request_error",
                                "not_found",
                                null,
                                "no such endpoint: " + ctx.method() + " " + ctx.path(),
                                null));
        });
        app.error(
                405,
                ctx -> error(
                        ctx,
                        new ApiError(
                                405,
                                "invalid_request_error",
                                "method_not_allowed",
                                null,
                                "method " + ctx.method() + " is not allowed on " + ctx.path(),
                                null)));
        this.loader = Thread.ofPlatform().name("goss-load").daemon().unstarted(() -> load(engineLoader));
    }

    /**
     * Starts listening at once and loads the model in the background ({@link #awaitReady}); the API answers 503
     * until it is loaded.
     *
     * @throws java.io.UncheckedIOException when the address cannot be bound (in use, not this machine's), in one line
     */
    public static GossServer start(ServerOptions options, Supplier<Engine> engineLoader) {
        GossServer s = new GossServer(options, engineLoader);
        try {
            s.app.start();
        } catch (RuntimeException e) {
            s.closeChannel();
            throw e;
        }
        s.port = s.channel.socket().getLocalPort();
        s.loader.start();
        LOG.info(
                "serving '{}' at http://{}:{}/v1 ({} {} of {} tokens, queue {}); loading the model",
                options.modelId(),
                options.host().contains(":") ? "[" + options.host() + "]" : options.host(),
                s.port(),
                options.parallel(),
                options.parallel() == 1 ? "slot" : "slots",
                options.contextLength(),
                options.queue());
        return s;
    }

    private void load(Supplier<Engine> engineLoader) {
        try {
            Engine e = engineLoader.get();
            SlotPool slots;
            try {
                slots = new SlotPool(
                        e,
                        options.parallel(),
                        options.queue(),
                        options.queueTimeoutMs(),
                        options.contextLength(),
                        options.swaRollback(),
                        options.kvMemoryBytes());
            } catch (RuntimeException | Error bad) { // --kv-memory below one slot's cache: the model is of no use
                e.close();
                throw bad;
            }
            synchronized (this) {
                if (closed) {
                    slots.closeSessions();
                    e.close();
                    return;
                }
                engine = e;
                pool = slots;
            }
            LOG.info(
                    "model '{}' loaded on {} in {} ms; ready",
                    options.modelId(),
                    e.backendDescription(),
                    Math.round(e.loadMs()));
            SlotPool p = pool;
            if (p != null)
                LOG.info(
                        "KV cache: {} per slot; {} of {} slots can hold one at once{}; the slots' generations share each step",
                        KvCacheSpec.humanBytes(p.chatCacheBytes()),
                        p.cachesInBudget(),
                        options.parallel(),
                        options.kvMemoryBytes() > 0
                                ? " (--kv-memory " + KvCacheSpec.humanBytes(options.kvMemoryBytes()) + ")"
                                : "");
        } catch (Throwable t) {
            loadError = t.getMessage() != null ? t.getMessage() : t.toString();
            LOG.error("loading the model failed: {}", loadError);
        } finally {
            loaded.countDown();
        }
    }

    /** Waits until the model is loaded (true) or failed to load / timed out (false). */
    public boolean awaitReady(Duration timeout) throws InterruptedException {
        return loaded.await(timeout.toMillis(), TimeUnit.MILLISECONDS) && pool != null;
    }

    /** Why the model failed to load, or null (still loading, or loaded). */
    public String loadError() {
        return loadError;
    }

    /** The port it listens on (the chosen one when the options said 0). */
    public int port() {
        return channel.socket().getLocalPort() > 0 ? channel.socket().getLocalPort() : port;
    }

    public Stats stats() {
        SlotPool p = pool;
        Engine e = engine;
        return new Stats(
                p != null,
                options.parallel(),
                p == null ? 0 : p.busy(),
                p == null ? 0 : p.waiting(),
                e == null ? 0 : e.openSessions(),
                requests.get(),
                rejected.get(),
                cancelled.get());
    }

    Engine engine() {
        return engine;
    }

    SlotPool pool() {
        return requireReady();
    }

    SlotPool requireReady() {
        if (draining) throw ApiError.shuttingDown();
        SlotPool p = pool;
        if (p != null) return p;
        if (loadError != null)
            throw new ApiError(
                    503, "server_error", "model_load_failed", null, "the model failed to load: " + loadError, null);
        throw new ApiError(503, "server_error", "model_loading", null, "the model is loading; retry shortly", "2");
    }

    /** 404 for a model id other than the one served; 400 when missing. */
    void checkModel(JsonNode body) {
        JsonNode m = body.get("model");
        if (m == null || m.isNull())
            throw ApiError.badRequest("model", "'model' is required (this server serves '" + options.modelId() + "')");
        if (!m.isTextual()) throw ApiError.badRequest("model", "'model' must be a string");
        if (!m.asText().equals(options.modelId())) throw unknownModel(m.asText());
    }

    private ApiError unknownModel(String id) {
        return new ApiError(
                404,
                "invalid_request_error",
                "model_not_found",
                "model",
                "The model '" + id + "' does not exist; this server serves '" + options.modelId() + "'",
                null);
    }

    // ------------------------------------------------------------------ endpoints

    /** {@code /health} and {@code /health/ready}: 200 once the model is loaded, 503 while loading, after a failed load, or while draining. */
    private void health(Context ctx) {
        ObjectNode o = Json.object();
        SlotPool p = pool;
        if (p != null && !draining) {
            o.put("status", "ok");
            Stats st = stats();
            o.put("slots", st.slots());
            o.put("busy_slots", st.busySlots());
            o.put("queued", st.queued());
            o.put("open_sessions", st.openSessions());
            json(ctx, 200, o);
        } else if (draining) {
            o.put("status", "draining");
            json(ctx, 503, o);
        } else if (loadError != null) {
            o.put("status", "error");
            o.put("error", loadError);
            json(ctx, 503, o);
        } else {
            o.put("status", "loading");
            ctx.header("Retry-After", "2");
            json(ctx, 503, o);
        }
    }

    private ObjectNode modelObject() {
        ObjectNode m = Json.object();
        m.put("id", options.modelId());
        m.put("object", "model");
        m.put("created", created);
        m.put("owned_by", "goss-gpu");
        return m;
    }

    private ObjectNode modelList() {
        requireReady();
        ObjectNode o = Json.object();
        o.put("object", "list");
        ArrayNode data = o.putArray("data");
        data.add(modelObject());
        return o;
    }

    // ------------------------------------------------------------------ plumbing

    private void authorize(Context ctx) {
        if (keyDigest == null || ctx.method() == HandlerType.OPTIONS) return;
        String h = ctx.header("Authorization");
        String given = h != null && h.regionMatches(true, 0, "Bearer ", 0, 7)
                ? h.substring(7).trim()
                : "";
        // Compare digests so that the time taken depends neither on where the keys differ nor on their lengths.
        if (!MessageDigest.isEqual(keyDigest, sha256(given)))
            throw new ApiError(
                    401,
                    "invalid_request_error",
                    "invalid_api_key",
                    null,
                    h == null ? "missing API key: send 'Authorization: Bearer KEY'" : "incorrect API key provided",
                    null);
    }

    private static byte[] sha256(String s) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The request body as a JSON object: 413 past the size limit, 400 when it is not a JSON object. */
    private JsonNode body(Context ctx) throws IOException {
        requests.incrementAndGet();
        int max = options.maxBodyBytes();
        long declared = ctx.req().getContentLengthLong();
        if (declared > max) throw tooLarge(declared);
        byte[] buf;
        try (InputStream in = ctx.req().getInputStream()) {
            buf = in.readNBytes(max + 1);
        } catch (IOException slow) { // Jetty's read timeout, or a client that left mid-body
            throw new ApiError(
                    408,
                    "invalid_request_error",
                    "request_timeout",
                    null,
                    "the request body was not received within " + options.readTimeoutMs() + " ms",
                    null);
        }
        if (buf.length > max) throw tooLarge(-1);
        JsonNode node;
        try {
            node = Json.MAPPER.readTree(buf);
        } catch (JsonProcessingException e) {
            throw ApiError.badRequest(null, "invalid_json", io.gossgpu.JsonSyntaxErrors.describe(e));
        }
        if (node == null || !node.isObject())
            throw ApiError.badRequest(null, "invalid_json", "the body must be a JSON object");
        String lone = Json.loneSurrogate(node, "");
        if (lone != null)
            throw ApiError.badRequest(
                    lone,
                    "invalid_json",
                    "invalid JSON: '" + lone
                            + "' holds a lone UTF-16 surrogate escape (such as \\ud800), which is not Unicode text");
        return node;
    }

    private ApiError tooLarge(long size) {
        return new ApiError(
                413,
                "invalid_request_error",
                "request_too_large",
                null,
                "the request body" + (size >= 0 ? " of " + size + " bytes" : "") + " exceeds the limit of "
                        + options.maxBodyBytes() + " bytes",
                null);
    }

    /** A streamed generation: writes its deltas to the stream as they come. */
    interface StreamedGeneration {
        Generation.Outcome run() throws IOException;
    }

    /** The chunks after the last delta (finish reason, usage), before {@code [DONE]}. */
    interface StreamEnd {
        void write(Generation.Outcome o) throws IOException;
    }

    /** Notes a generation for the access log and the metrics; counts a client that left. */
    void note(Context ctx, SlotPool.Slot slot, Generation.Outcome o) {
        RequestNotes notes = RequestNotes.of(ctx.req());
        notes.slot = slot.index;
        notes.outcome = o;
        if (o.clientGone()) clientGone(ctx);
    }

    /** The client left before its reply was complete: counted, and noted for the access log. */
    void clientGone(Context ctx) {
        RequestNotes.of(ctx.req()).clientGone = true;
        cancelled.incrementAndGet();
    }

    /** A non-streamed generation's outcome, noted ({@link #note}); a reply cut by the shutdown is a 503 instead. */
    Generation.Outcome finished(Context ctx, SlotPool.Slot slot, Generation.Outcome o) {
        note(ctx, slot, o);
        if (o.aborted()) throw ApiError.cutByShutdown();
        return o;
    }

    /**
     * Runs a streamed generation, then its closing chunks and {@code [DONE]}. A client that went away (at any point)
     * counts as a cancellation; a failure mid-stream, or a reply cut by the shutdown, becomes an error event and the
     * stream ends without {@code [DONE]}, so that no client takes it for a complete reply.
     */
    void stream(Context ctx, SlotPool.Slot slot, Sse sse, StreamedGeneration generation, StreamEnd end) {
        RequestNotes.of(ctx.req()).slot = slot.index;
        Generation.Outcome o;
        try {
            o = generation.run();
        } catch (IOException gone) {
            clientGone(ctx);
            return;
        } catch (RuntimeException failed) {
            streamError(ctx, sse, failed);
            return;
        }
        note(ctx, slot, o);
        if (o.clientGone()) return;
        if (o.aborted()) {
            streamError(ctx, sse, ApiError.cutByShutdown());
            return;
        }
        try {
            end.write(o);
            sse.done();
        } catch (IOException gone) {
            clientGone(ctx);
        }
    }

    /** An error event in OpenAI's shape on a stream that has begun; the stream then ends. */
    void streamError(Context ctx, Sse sse, RuntimeException e) {
        ApiError api = streamFailure(ctx, e);
        try {
            sse.data(Json.error(api.getMessage(), api.type, null, api.code));
        } catch (IOException gone) {
            clientGone(ctx);
        }
    }

    /** A failure after a stream began, as the error to tell the client; noted, and logged with its cause when unexpected. */
    ApiError streamFailure(Context ctx, RuntimeException e) {
        ApiError api = e instanceof ApiError a
                ? a
                : new ApiError(
                        500,
                        "server_error",
                        "stream_failed",
                        null,
                        e.getMessage() != null ? e.getMessage() : e.toString(),
                        null);
        if (!(e instanceof ApiError)) LOG.warn("generation failed mid-stream", e);
        RequestNotes.of(ctx.req()).error = api.code;
        return api;
    }

    static void json(Context ctx, int status, Object body) {
        ctx.status(status);
        ctx.contentType("application/json");
        ctx.result(Json.write(body));
    }

    private void error(Context ctx, ApiError e) {
        RequestNotes.of(ctx.req()).error = e.code != null ? e.code : e.type;
        if (ctx.res().isCommitted()) return;
        if (e.retryAfter != null) ctx.header("Retry-After", e.retryAfter);
        json(ctx, e.status, Json.error(e.getMessage(), e.type, e.param, e.code));
    }

    /**
     * Stops, draining first: stops accepting connections and requests (new ones on open connections get 503,
     * readiness turns 503), lets the running generations finish for up to {@link ServerOptions#drainTimeoutMs()},
     * then ends the rest (a stream gets an error event and no {@code [DONE]}, a waiting client 503), stops listening
     * and releases the model.
     */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                awaitStopped(); // a second caller (a shutdown hook) returns once the first is done
                return;
            }
            closed = true;
        }
        try {
            drainAndStop();
        } finally {
            stopped.countDown();
        }
    }

    /** Ends the running requests now (each with an error), cutting a drain short; for a second Ctrl-C. */
    public void endRunningRequests() {
        SlotPool p = pool;
        if (p != null) p.abort(0);
    }

    private void awaitStopped() {
        try {
            stopped.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void drainAndStop() {
        long t0 = System.nanoTime();
        draining = true;
        SlotPool p = pool;
        int running = p == null ? 0 : p.busy();
        LOG.info(
                "shutting down: {} running {}, drain up to {} s",
                running,
                running == 1 ? "request" : "requests",
                options.drainTimeoutMs() / 1000.0);
        stopListening();
        boolean idle = true;
        if (p != null) {
            p.stopAccepting();
            if (!p.awaitIdle(options.drainTimeoutMs())) {
                LOG.warn(
                        "drain time is up: ending {} unfinished {} with an error",
                        p.busy(),
                        p.busy() == 1 ? "request" : "requests");
                idle = p.abort(10_000);
            }
        }
        stopJetty();
        closeChannel();
        Engine e = engine;
        if (e != null) {
            if (idle) {
                p.closeSessions();
                e.close();
            } else LOG.warn("generations did not stop in time; leaving the model loaded");
        }
        LOG.info("stopped in {} ms", Math.round((System.nanoTime() - t0) / 1e6));
    }

    /**
     * Stops Jetty. Its graceful stop waits a moment ({@link JettySetup#STOP_TIMEOUT_MS}) for connections to end; one a
     * client still holds open after its reply ended is then closed, which Javalin reports as an exception: Jetty has
     * stopped all the same.
     */
    private void stopJetty() {
        try {
            app.stop();
        } catch (RuntimeException e) {
            LOG.info("stop: closed the connections still open after their replies ended ({})", e.getMessage());
        }
    }

    /** Closes the listening socket: the port is free for another server while running requests finish. */
    private void stopListening() {
        ServerConnector c = connector.get();
        if (c != null) {
            c.setAccepting(false);
            c.close();
        }
        closeChannel();
    }

    private void closeChannel() {
        try {
            channel.close();
        } catch (IOException ignored) {
            // already closed
        }
    }
}
