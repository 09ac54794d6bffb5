package io.gossgpu.server;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.gossgpu.GossException;
import io.gossgpu.api.Engine;
import io.javalin.Javalin;
import io.javalin.http.Context;
import io.javalin.http.HandlerType;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * The OpenAI-compatible HTTP server: {@code GET /health}, {@code GET /v1/models}, {@code POST /v1/chat/completions},
 * {@code POST /v1/completions} and {@code POST /v1/responses}, on Javalin (Jetty). The model loads in the background
 * after the server starts; until it is ready the API answers 503. Requests run on a {@link SlotPool}.
 */
public final class GossServer implements AutoCloseable {
    /** Counters for monitoring and for tests that check nothing leaks. */
    public record Stats(boolean ready, int slots, int busySlots, int queued, int openSessions, long requests,
                        long rejected, long cancelled) {}

    /** How long an idle keep-alive connection stays open. */
    static long IDLE_TIMEOUT_MS = Long.getLong("goss.server.idleTimeoutMs", 60_000L);

    final ServerOptions options;
    final long created = System.currentTimeMillis() / 1000;
    private final Javalin app;
    private final byte[] keyDigest;
    private final CountDownLatch loaded = new CountDownLatch(1);
    private volatile Engine engine;
    private volatile SlotPool pool;
    private volatile String loadError;
    private volatile boolean closed;
    final AtomicLong requests = new AtomicLong(), rejected = new AtomicLong(), cancelled = new AtomicLong();
    private final ChatCompletionsApi chatApi = new ChatCompletionsApi(this);
    private final CompletionsApi completionsApi = new CompletionsApi(this);
    private final ResponsesApi responsesApi;
    private final Thread loader;

    private GossServer(ServerOptions options, Supplier<Engine> engineLoader) {
        this.options = options;
        this.keyDigest = options.apiKey() == null ? null : sha256(options.apiKey());
        this.responsesApi = new ResponsesApi(this, options.storedResponses());
        this.app = Javalin.create(cfg -> {
            cfg.showJavalinBanner = false;
            cfg.startupWatcherEnabled = false;
            cfg.http.maxRequestSize = options.maxBodyBytes();
            cfg.http.disableCompression();
            cfg.router.ignoreTrailingSlashes = true;
            // Our own connector, to state its idle timeout (it closes idle keep-alive connections; a request being
            // generated is not idle in Jetty's sense, so long non-streaming replies are not cut, see ErrorsTest).
            cfg.jetty.addConnector((server, httpConfig) -> {
                org.eclipse.jetty.server.ServerConnector c = new org.eclipse.jetty.server.ServerConnector(server,
                        new org.eclipse.jetty.server.HttpConnectionFactory(httpConfig));
                c.setHost(options.host());
                c.setPort(options.port());
                c.setIdleTimeout(IDLE_TIMEOUT_MS);
                return c;
            });
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
        app.before("/v1/*", this::authorize);
        app.get("/health", this::health);
        app.get("/v1/models", ctx -> json(ctx, 200, modelList()));
        app.get("/v1/models/{id}", ctx -> {
            requireReady();
            if (!ctx.pathParam("id").equals(options.modelId())) throw unknownModel(ctx.pathParam("id"));
            json(ctx, 200, modelObject());
        });
        app.post("/v1/chat/completions", ctx -> chatApi.handle(ctx, body(ctx)));
        app.post("/v1/completions", ctx -> completionsApi.handle(ctx, body(ctx)));
        app.post("/v1/responses", ctx -> responsesApi.handle(ctx, body(ctx)));
        app.exception(ApiError.class, (e, ctx) -> error(ctx, e));
        app.exception(io.javalin.http.HttpResponseException.class, (e, ctx) -> error(ctx, new ApiError(e.getStatus(),
                e.getStatus() >= 500 ? "server_error" : "invalid_request_error", e.getStatus() == 404 ? "not_found" : null, null,
                e.getStatus() == 404 ? "no such endpoint: " + ctx.method() + " " + ctx.path() : e.getMessage(), null)));
        app.exception(SlotPool.Full.class, (e, ctx) -> {
            rejected.incrementAndGet();
            error(ctx, new ApiError(429, "rate_limit_error", "server_busy", null,
                    "all " + options.parallel() + " slots are busy and " + options.queue() + " requests are waiting; retry later", "1"));
        });
        app.exception(Exception.class, (e, ctx) -> {
            if (e instanceof GossException g) error(ctx, new ApiError(500, "server_error", null, null, g.getMessage(), null));
            else {
                org.slf4j.LoggerFactory.getLogger(GossServer.class).error("request failed", e);
                error(ctx, new ApiError(500, "server_error", null, null, "internal error: " + e, null));
            }
        });
        app.error(404, ctx -> {
            if (ctx.result() == null || ctx.result().isEmpty())
                error(ctx, new ApiError(404, "invalid_request_error", "not_found", null, "no such endpoint: " + ctx.method() + " " + ctx.path(), null));
        });
        app.error(405, ctx -> error(ctx, new ApiError(405, "invalid_request_error", "method_not_allowed", null, "method not allowed: " + ctx.method() + " " + ctx.path(), null)));
        this.loader = Thread.ofPlatform().name("goss-load").daemon().unstarted(() -> load(engineLoader));
    }

    /**
     * Starts listening at once and loads the model in the background ({@link #awaitReady}); the API answers 503
     * until it is loaded.
     */
    public static GossServer start(ServerOptions options, Supplier<Engine> engineLoader) {
        GossServer s = new GossServer(options, engineLoader);
        s.app.start();
        s.loader.start();
        return s;
    }

    private void load(Supplier<Engine> engineLoader) {
        try {
            Engine e = engineLoader.get();
            synchronized (this) {
                if (closed) {
                    e.close();
                    return;
                }
                engine = e;
                pool = new SlotPool(e, options.parallel(), options.queue(), options.queueTimeoutMs(), options.contextLength(),
                        options.swaRollback());
            }
        } catch (Throwable t) {
            loadError = t.getMessage() != null ? t.getMessage() : t.toString();
            org.slf4j.LoggerFactory.getLogger(GossServer.class).error("loading the model failed: {}", loadError);
        } finally {
            loaded.countDown();
        }
    }

    /** Waits until the model is loaded (true) or failed to load / timed out (false). */
    public boolean awaitReady(Duration timeout) throws InterruptedException {
        return loaded.await(timeout.toMillis(), TimeUnit.MILLISECONDS) && pool != null;
    }

    /** The port it listens on (the chosen one when the options said 0). */
    public int port() {
        return app.port();
    }

    public Stats stats() {
        SlotPool p = pool;
        Engine e = engine;
        return new Stats(p != null, options.parallel(), p == null ? 0 : p.busy(), p == null ? 0 : p.waiting(),
                e == null ? 0 : e.openSessions(), requests.get(), rejected.get(), cancelled.get());
    }

    Engine engine() {
        return engine;
    }

    SlotPool pool() {
        return requireReady();
    }

    SlotPool requireReady() {
        SlotPool p = pool;
        if (p != null) return p;
        if (loadError != null)
            throw new ApiError(503, "server_error", "model_load_failed", null, "the model failed to load: " + loadError, null);
        throw new ApiError(503, "server_error", "model_loading", null, "the model is loading; retry shortly", "2");
    }

    /** 404 for a model id other than the one served; 400 when missing. */
    void checkModel(JsonNode body) {
        JsonNode m = body.get("model");
        if (m == null || m.isNull()) throw ApiError.badRequest("model", "'model' is required (this server serves '" + options.modelId() + "')");
        if (!m.isTextual()) throw ApiError.badRequest("model", "'model' must be a string");
        if (!m.asText().equals(options.modelId())) throw unknownModel(m.asText());
    }

    private ApiError unknownModel(String id) {
        return new ApiError(404, "invalid_request_error", "model_not_found", "model",
                "The model '" + id + "' does not exist; this server serves '" + options.modelId() + "'", null);
    }

    // ------------------------------------------------------------------ endpoints

    private void health(Context ctx) {
        ObjectNode o = Json.object();
        SlotPool p = pool;
        if (p != null) {
            o.put("status", "ok");
            Stats st = stats();
            o.put("slots", st.slots());
            o.put("busy_slots", st.busySlots());
            o.put("queued", st.queued());
            o.put("open_sessions", st.openSessions());
            json(ctx, 200, o);
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
        String given = h != null && h.regionMatches(true, 0, "Bearer ", 0, 7) ? h.substring(7).trim() : "";
        // Compare digests so that the time taken depends neither on where the keys differ nor on their lengths.
        if (!MessageDigest.isEqual(keyDigest, sha256(given)))
            throw new ApiError(401, "invalid_request_error", "invalid_api_key", null,
                    h == null ? "missing API key: send 'Authorization: Bearer KEY'" : "incorrect API key provided", null);
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
        }
        if (buf.length > max) throw tooLarge(-1);
        JsonNode node;
        try {
            node = Json.MAPPER.readTree(buf);
        } catch (JsonProcessingException e) {
            throw ApiError.badRequest(null, "invalid_json", "the body is not valid JSON: " + e.getOriginalMessage());
        }
        if (node == null || !node.isObject()) throw ApiError.badRequest(null, "invalid_json", "the body must be a JSON object");
        return node;
    }

    private ApiError tooLarge(long size) {
        return new ApiError(413, "invalid_request_error", "request_too_large", null,
                "the request body" + (size >= 0 ? " of " + size + " bytes" : "") + " exceeds the limit of " + options.maxBodyBytes() + " bytes", null);
    }

    /** A failure after a stream has begun: an error event in OpenAI's shape, then the stream ends. */
    /** A streamed generation: writes its deltas to the stream as they come. */
    interface StreamedGeneration {
        Generation.Outcome run() throws IOException;
    }

    /** The chunks after the last delta (finish reason, usage), before {@code [DONE]}. */
    interface StreamEnd {
        void write(Generation.Outcome o) throws IOException;
    }

    /**
     * Runs a streamed generation, then its closing chunks and {@code [DONE]}. A client that went away (at
     * any point) counts as a cancellation; a failure mid-stream becomes an error event.
     */
    void stream(Sse sse, StreamedGeneration generation, StreamEnd end) {
        Generation.Outcome o;
        try {
            o = generation.run();
        } catch (IOException gone) {
            cancelled.incrementAndGet();
            return;
        } catch (RuntimeException failed) {
            streamError(sse, failed);
            return;
        }
        if (o.clientGone()) {
            cancelled.incrementAndGet();
            return;
        }
        try {
            end.write(o);
            sse.done();
        } catch (IOException gone) {
            cancelled.incrementAndGet();
        }
    }

    void streamError(Sse sse, RuntimeException e) {
        org.slf4j.LoggerFactory.getLogger(GossServer.class).warn("generation failed mid-stream: {}", e.toString());
        try {
            sse.data(Json.error(e.getMessage() != null ? e.getMessage() : e.toString(), "server_error", null, null));
        } catch (IOException gone) {
            cancelled.incrementAndGet();
        }
    }

    static void json(Context ctx, int status, Object body) {
        ctx.status(status);
        ctx.contentType("application/json");
        ctx.result(Json.write(body));
    }

    private void error(Context ctx, ApiError e) {
        if (ctx.res().isCommitted()) return;
        if (e.retryAfter != null) ctx.header("Retry-After", e.retryAfter);
        json(ctx, e.status, Json.error(e.getMessage(), e.type, e.param, e.code));
    }

    /**
     * Stops: cancels the generations under way (their clients get what was generated so far), waits for them to end,
     * stops listening, and releases the model. Requests still queued get 503.
     */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) return;
            closed = true;
        }
        SlotPool p = pool;
        boolean idle = p == null || p.close(10_000);
        app.stop();
        Engine e = engine;
        if (e != null) {
            if (idle) e.close();
            else org.slf4j.LoggerFactory.getLogger(GossServer.class).warn("generations did not stop in time; leaving the model loaded");
        }
    }
}
