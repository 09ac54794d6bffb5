package io.gossgpu.cli;

import io.gossgpu.GossException;
import io.gossgpu.api.Engine;
import io.gossgpu.api.EngineOptions;
import io.gossgpu.backend.KvCacheSpec;
import io.gossgpu.server.GossServer;
import io.gossgpu.server.ServerOptions;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;

/** {@code goss-gpu serve}: the OpenAI-compatible HTTP server (see the server module). */
@Command(name = "serve", header = "Serve the model over an OpenAI-compatible HTTP API.", sortOptions = false,
        description = "Serves the model over an OpenAI-compatible HTTP API: /v1/chat/completions, /v1/completions, /v1/responses, /v1/models, /health. Listens on loopback unless --host says otherwise.")
public final class ServeCommand implements Runnable {
    @Mixin
    HelpOption help;

    @Mixin
    ModelOptions modelOptions;

    @Option(names = "--host", defaultValue = "127.0.0.1", description = "Address to listen on (default: ${DEFAULT-VALUE}, loopback only).")
    String host;

    @Option(names = "--port", defaultValue = "8080", description = "TCP port; 0 picks a free one (default: ${DEFAULT-VALUE}).")
    int port;

    @Option(names = "--api-key", defaultValue = "${env:GOSS_API_KEY}",
            description = "Require 'Authorization: Bearer KEY' on /v1 (default: GOSS_API_KEY, else none).")
    String apiKey;

    @Option(names = "--model-id", description = "The model name clients send and /v1/models lists (default: from the model's folder).")
    String modelId;

    @Option(names = "--parallel", defaultValue = "2", description = "Requests generated at once, each with its own KV cache (default: ${DEFAULT-VALUE}).")
    int parallel;

    @Option(names = "--queue", defaultValue = "16", description = "Requests that may wait for a slot; more get 429 (default: ${DEFAULT-VALUE}).")
    int queue;

    @Option(names = {"-c", "--context"}, defaultValue = "4096", description = "Context length of each slot in tokens (default: ${DEFAULT-VALUE}).")
    int context;

    @Option(names = "--swa-rollback", defaultValue = "" + KvCacheSpec.DEFAULT_SWA_ROLLBACK, paramLabel = "N",
            description = "Extra KV cache positions per slot on sliding-window layers so that a conversation sent back without the last reply's reasoning reuses the cache; 0 keeps only the window (default: ${DEFAULT-VALUE}).")
    int swaRollback;

    @Option(names = "--max-tokens", defaultValue = "1024", description = "Tokens generated when a request sets no limit (default: ${DEFAULT-VALUE}).")
    int maxTokens;

    @Option(names = "--max-body", defaultValue = "4194304", description = "Largest request body in bytes; larger get 413 (default: ${DEFAULT-VALUE}).")
    int maxBody;

    @Option(names = "--stored-responses", defaultValue = "256",
            description = "Responses kept in memory for previous_response_id, oldest dropped first (default: ${DEFAULT-VALUE}).")
    int storedResponses;

    /** Latches of the serve commands running in this JVM (tests stop them with {@link #stopAll}). */
    private static final java.util.Set<CountDownLatch> RUNNING = java.util.concurrent.ConcurrentHashMap.newKeySet();

    /** Stops every serve command running in this JVM (for tests; users stop the server with Ctrl-C). */
    static void stopAll() {
        RUNNING.forEach(CountDownLatch::countDown);
    }

    @Option(names = "--cors", description = "Let browser pages from these origins call the API: '*' or a comma-separated list (default: none).")
    String cors;

    @Override
    public void run() {
        // Jetty and Javalin log every start-up step at INFO; the server's own lines say what matters.
        if (System.getProperty("org.slf4j.simpleLogger.defaultLogLevel") == null)
            System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        modelOptions.apply();
        Path model = DemoModel.resolve(modelOptions.model);
        String id = modelId != null ? modelId : defaultModelId(model);
        ServerOptions options;
        try {
            options = new ServerOptions(host, port, id, apiKey, parallel, queue, 300_000, context, maxBody, maxTokens, storedResponses, cors, swaRollback);
        } catch (IllegalArgumentException e) {
            throw new GossException(e.getMessage());
        }
        if (!isLoopback(host))
            System.err.println("goss-gpu: warning: listening on " + host + ", not loopback: other machines can reach the model"
                    + (options.apiKey() == null ? ", and no --api-key is set" : ""));
        EngineOptions engineOptions = new EngineOptions(model, modelOptions.backend, !modelOptions.noMmap).withCheckTensors(modelOptions.checkTensors);
        GossServer server;
        try {
            server = GossServer.start(options, () -> {
                Engine e = Engine.open(engineOptions);
                System.err.printf("goss-gpu: %s on %s loaded in %.0f ms; ready%n", model, e.backendDescription(), e.loadMs());
                return e;
            });
        } catch (RuntimeException e) {
            throw new GossException("cannot listen on " + host + ":" + port + ": " + e.getMessage());
        }
        System.err.printf("goss-gpu: serving '%s' at http://%s:%d/v1 (%d slots of %d tokens, queue %d); loading the model ...%n",
                id, host.contains(":") ? "[" + host + "]" : host, server.port(), parallel, context, queue);
        CountDownLatch stop = new CountDownLatch(1);
        Thread hook = new Thread(() -> {
            stop.countDown();
            server.close();
        }, "goss-serve-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        RUNNING.add(stop);
        try {
            stop.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            RUNNING.remove(stop);
            server.close();
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException shuttingDown) {
                // the hook is running
            }
        }
    }

    /** gpt-oss-20b for .../gpt-oss-20b/original, the file name without .gguf for a GGUF file. */
    static String defaultModelId(Path model) {
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
