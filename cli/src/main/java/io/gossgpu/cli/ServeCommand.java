package io.gossgpu.cli;

import io.gossgpu.GossException;
import io.gossgpu.api.Engine;
import io.gossgpu.api.EngineOptions;
import io.gossgpu.backend.KvCacheSpec;
import io.gossgpu.server.GossServer;
import io.gossgpu.server.ServerOptions;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code goss-gpu serve}: the OpenAI-compatible HTTP server (see the server module). */
@Command(
        name = "serve",
        header = "Serve the model over an OpenAI-compatible HTTP API.",
        sortOptions = false,
        description =
                "Serves the model over an OpenAI-compatible HTTP API: /v1/chat/completions, /v1/completions, /v1/responses, /v1/models, /health. Listens on loopback unless --host says otherwise.")
public final class ServeCommand implements Runnable {
    @Mixin
    HelpOption help;

    @Mixin
    ModelOptions modelOptions;

    @Option(
            names = "--host",
            defaultValue = "127.0.0.1",
            description = "Address to listen on (default: ${DEFAULT-VALUE}, loopback only).")
    String host;

    @Option(
            names = "--port",
            defaultValue = "8080",
            description = "TCP port; 0 picks a free one (default: ${DEFAULT-VALUE}).")
    int port;

    @Option(
            names = "--api-key",
            defaultValue = "${env:GOSS_API_KEY}",
            description = "Require 'Authorization: Bearer KEY' on /v1 (default: GOSS_API_KEY, else none).")
    String apiKey;

    @Option(
            names = "--model-id",
            description =
                    "The model name clients send and /v1/models lists; others get 404 (default: the model's folder name, goss-demo for the demo model).")
    String modelId;

    @Option(
            names = "--parallel",
            defaultValue = "2",
            description = "Requests generated at once, each with its own KV cache (default: ${DEFAULT-VALUE}).")
    int parallel;

    @Option(
            names = "--queue",
            defaultValue = "16",
            description = "Requests that may wait for a slot; more get 429 (default: ${DEFAULT-VALUE}).")
    int queue;

    @Option(
            names = {"-c", "--context"},
            defaultValue = "4096",
            description = "Context length of each slot in tokens (default: ${DEFAULT-VALUE}).")
    int context;

    @Option(
            names = "--swa-rollback",
            defaultValue = "" + KvCacheSpec.DEFAULT_SWA_ROLLBACK,
            paramLabel = "N",
            description =
                    "Extra KV cache positions per slot on sliding-window layers so that a conversation sent back without the last reply's reasoning reuses the cache; 0 keeps only the window (default: ${DEFAULT-VALUE}).")
    int swaRollback;

    @Option(
            names = "--kv-memory",
            paramLabel = "SIZE",
            converter = ByteSize.class,
            description =
                    "The most memory the slots' KV caches take together, e.g. 6g or 512m: a request whose slot would need a new cache past it waits (idle slots' caches are dropped first); default: what the device holds.")
    long kvMemory;

    @Option(
            names = "--max-tokens",
            defaultValue = "1024",
            description = "Tokens generated when a request sets no limit (default: ${DEFAULT-VALUE}).")
    int maxTokens;

    @Option(
            names = "--max-body",
            defaultValue = "4194304",
            description = "Largest request body in bytes; larger get 413 (default: ${DEFAULT-VALUE}).")
    int maxBody;

    @Option(
            names = "--stored-responses",
            defaultValue = "256",
            description =
                    "Responses kept in memory for previous_response_id, oldest dropped first (default: ${DEFAULT-VALUE}).")
    int storedResponses;

    @Option(
            names = {"--cors-origins", "--cors"},
            paramLabel = "ORIGINS",
            description =
                    "Let browser pages from these origins call the API (CORS): '*' or a comma-separated list such as http://localhost:3000; any other Origin gets 403 (default: none).")
    String cors;

    @Option(
            names = "--allowed-hosts",
            paramLabel = "NAMES",
            description =
                    "Host names accepted besides IP addresses, localhost and --host (comma-separated, '*' for any): others get 403, which stops DNS rebinding (default: none).")
    String allowedHosts;

    @Option(
            names = "--read-timeout",
            defaultValue = "30",
            paramLabel = "SECONDS",
            description =
                    "Longest wait for the next bytes of a request (headers or body) before 408; also how long an idle connection stays open (default: ${DEFAULT-VALUE}).")
    double readTimeout;

    @Option(
            names = "--max-connections",
            defaultValue = "512",
            description = "Open connections at most; more wait until one closes (default: ${DEFAULT-VALUE}).")
    int maxConnections;

    @Option(
            names = "--drain-timeout",
            defaultValue = "30",
            paramLabel = "SECONDS",
            description =
                    "On SIGTERM or Ctrl-C, how long running requests may finish before they are ended with an error; a second signal ends them at once (default: ${DEFAULT-VALUE}).")
    double drainTimeout;

    @Option(
            names = "--log-format",
            defaultValue = "text",
            paramLabel = "text|json",
            description =
                    "Log lines (one per request, plus start, stop and errors) on stderr as text or as JSON objects (default: ${DEFAULT-VALUE}).")
    String logFormat;

    @Override
    public void run() {
        ServerLogging.Format format;
        try {
            format = ServerLogging.Format.parse(logFormat);
        } catch (IllegalArgumentException e) {
            throw new GossException(e.getMessage());
        }
        ServerLogging.configure(format, System.err);
        LibraryMessages.toSlf4j();
        for (String line : HeldStderr.take())
            LoggerFactory.getLogger("jvm").warn(line.startsWith("WARNING: ") ? line.substring(9) : line);
        Path model = DemoModel.resolve(
                modelOptions.model, LoggerFactory.getLogger("goss.server")::info); // in the log's format
        String id = modelId != null ? modelId : defaultModelId(model);
        ServerOptions options;
        try {
            options = ServerOptions.defaults()
                    .withHost(host)
                    .withPort(port)
                    .withModelId(id)
                    .withApiKey(apiKey)
                    .withParallel(parallel)
                    .withQueue(queue)
                    .withContextLength(context)
                    .withMaxBodyBytes(maxBody)
                    .withDefaultMaxTokens(maxTokens)
                    .withStoredResponses(storedResponses)
                    .withCorsOrigins(cors)
                    .withSwaRollback(swaRollback)
                    .withAllowedHosts(allowedHosts)
                    .withReadTimeoutMs(millis(readTimeout, "--read-timeout"))
                    .withMaxConnections(maxConnections)
                    .withDrainTimeoutMs(millis(drainTimeout, "--drain-timeout"))
                    .withKvMemoryBytes(kvMemory);
        } catch (IllegalArgumentException e) {
            throw new GossException(e.getMessage());
        }
        if (!isLoopback(host))
            LoggerFactory.getLogger("goss.server")
                    .warn(
                            "listening on {}, not loopback: other machines can reach the model{}",
                            host,
                            options.apiKey() == null ? ", and no --api-key is set" : "");
        EngineOptions engineOptions = modelOptions
                .engineOptions(model, (int) Math.min(Integer.MAX_VALUE, (long) context * parallel))
                .withContextLength(context)
                .withProgress(io.gossgpu.api.LoadProgress.NONE);
        GossServer server;
        try {
            server = GossServer.start(options, () -> Engine.open(engineOptions));
        } catch (java.io.UncheckedIOException e) {
            throw new GossException(e.getMessage());
        }
        ServeStop stop = new ServeStop(server);
        // A model that cannot load leaves nothing to serve: stop and exit 1 with its reason, as a bad option does (the
        // server object itself keeps answering 503 model_load_failed, for applications that embed it).
        Thread.ofPlatform().daemon().name("goss-serve-load").start(() -> {
            try {
                if (!server.awaitReady(java.time.Duration.ofDays(3650)) && server.loadError() != null)
                    stop.signalled.countDown();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        // The handlers stay for the drain: a second signal must reach ServeStop (which ends the running requests at
        // once), not the JVM's default handler, which exits 143/130 through a shutdown hook that waits for the drain.
        try (AutoCloseable signals = stop.onSignals()) {
            try {
                stop.signalled.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                server.close(); // drains; a second signal meanwhile ends what is left at once
            }
        } catch (Exception restoring) {
            // putting the previous handlers back cannot fail
        } finally {
            stop.removeHook();
        }
        if (server.loadError() != null) throw new GossException("the model failed to load: " + server.loadError());
    }

    private static long millis(double seconds, String option) {
        if (!(seconds >= 0) || Double.isInfinite(seconds))
            throw new IllegalArgumentException(option + " must be a number of seconds >= 0, got " + seconds);
        return Math.round(seconds * 1000);
    }

    /** The id the demo model is served as (its folder's name carries a hash that changes with every retraining). */
    static final String DEMO_MODEL_ID = "goss-demo";

    /** gpt-oss-20b for .../gpt-oss-20b/original, the file name without .gguf for a GGUF file, {@value #DEMO_MODEL_ID} for the demo. */
    static String defaultModelId(Path model) {
        if (DemoModel.isDemo(model)) return DEMO_MODEL_ID;
        Path p = model.toAbsolutePath().normalize();
        String name = p.getFileName() == null ? "gpt-oss" : p.getFileName().toString();
        if (name.equals("original") && p.getParent() != null && p.getParent().getFileName() != null)
            name = p.getParent().getFileName().toString();
        if (name.endsWith(".gguf")) name = name.substring(0, name.length() - 5);
        return name.isEmpty() ? "gpt-oss" : name;
    }

    private static boolean isLoopback(String host) {
        try {
            return InetAddress.getByName(host).isLoopbackAddress();
        } catch (UnknownHostException e) {
            return false;
        }
    }
}
