package io.gossgpu.server;

import io.gossgpu.backend.KvCacheSpec;

/**
 * Settings of the OpenAI-compatible server; {@link #defaults()} and the {@code with...} methods build them.
 *
 * @param host            address to listen on (loopback by default; anything else exposes the model to the network)
 * @param port            TCP port (0 picks a free one, see {@link GossServer#port()})
 * @param modelId         the id clients put in {@code "model"} and {@code GET /v1/models} lists
 * @param apiKey          required bearer token, or null for none
 * @param parallel        slots: requests generated at once, each slot with its own KV cache
 * @param queue           requests that may wait for a slot; past that the server answers 429
 * @param queueTimeoutMs  longest wait for a slot before 503
 * @param contextLength   tokens each slot's KV cache holds
 * @param maxBodyBytes    largest request body (413 past it)
 * @param defaultMaxTokens tokens generated when a request names no limit
 * @param storedResponses Responses API results kept in memory for {@code previous_response_id} and
 *                        {@code GET /v1/responses/{id}} (oldest dropped first)
 * @param corsOrigins     browser origins allowed to call the API (CORS): null for none, {@code *} for any, or a
 *                        comma-separated list such as {@code http://localhost:3000}; any other {@code Origin} gets 403
 * @param swaRollback     extra KV cache slots on sliding-window layers so that a slot's conversation can be resumed
 *                        inside the last reply (clients send it back without its reasoning); 0 keeps exactly the
 *                        window ({@link io.gossgpu.api.ChatOptions#swaRollback()})
 * @param allowedHosts    {@code Host} names accepted besides loopback names and the listening address
 *                        (comma-separated, {@code *} for any, null for none): a DNS-rebinding guard
 * @param readTimeoutMs   longest wait for the next bytes of a request (headers or body) before 408, and how long an
 *                        idle keep-alive connection stays open
 * @param maxConnections  open connections at most; past that new ones wait in the listen backlog
 * @param drainTimeoutMs  on {@link GossServer#close()}, how long running requests may still finish before they are
 *                        ended with an error
 * @param kvMemoryBytes   the most memory the slots' KV caches may take together (0: as much as the device gives): a
 *                        request whose slot has no cache yet waits until one fits, idle slots' caches dropped first
 */
public record ServerOptions(
        String host,
        int port,
        String modelId,
        String apiKey,
        int parallel,
        int queue,
        long queueTimeoutMs,
        int contextLength,
        int maxBodyBytes,
        int defaultMaxTokens,
        int storedResponses,
        String corsOrigins,
        int swaRollback,
        String allowedHosts,
        long readTimeoutMs,
        int maxConnections,
        long drainTimeoutMs,
        long kvMemoryBytes) {
    public ServerOptions {
        if (swaRollback < 0) throw new IllegalArgumentException("--swa-rollback must be >= 0, got " + swaRollback);
        if (parallel < 1) throw new IllegalArgumentException("--parallel must be at least 1, got " + parallel);
        if (queue < 0) throw new IllegalArgumentException("--queue must be >= 0, got " + queue);
        if (contextLength < 16)
            throw new IllegalArgumentException("--context must be at least 16, got " + contextLength);
        if (maxBodyBytes < 1024)
            throw new IllegalArgumentException("--max-body must be at least 1024 bytes, got " + maxBodyBytes);
        if (defaultMaxTokens < 1)
            throw new IllegalArgumentException("default max tokens must be positive, got " + defaultMaxTokens);
        if (storedResponses < 0)
            throw new IllegalArgumentException("stored responses must be >= 0, got " + storedResponses);
        if (readTimeoutMs < 1)
            throw new IllegalArgumentException("--read-timeout must be positive, got " + readTimeoutMs + " ms");
        if (maxConnections < 1)
            throw new IllegalArgumentException("--max-connections must be at least 1, got " + maxConnections);
        if (drainTimeoutMs < 0)
            throw new IllegalArgumentException("--drain-timeout must be >= 0, got " + drainTimeoutMs + " ms");
        if (kvMemoryBytes < 0)
            throw new IllegalArgumentException("--kv-memory must be >= 0, got " + kvMemoryBytes + " bytes");
        if (apiKey != null && apiKey.isEmpty()) apiKey = null;
        if (corsOrigins != null && corsOrigins.isBlank()) corsOrigins = null;
        if (allowedHosts != null && allowedHosts.isBlank()) allowedHosts = null;
    }

    /** Loopback, port 8080, 2 slots of 4096 tokens, a queue of 16, no key, no CORS, 30 s read timeout and drain. */
    public static ServerOptions defaults() {
        return new ServerOptions(
                "127.0.0.1",
                8080,
                "gpt-oss",
                null,
                2,
                16,
                300_000,
                4096,
                4 << 20,
                1024,
                256,
                null,
                KvCacheSpec.DEFAULT_SWA_ROLLBACK,
                null,
                30_000,
                512,
                30_000,
                0);
    }

    public ServerOptions withHost(String h) {
        return new ServerOptions(
                h,
                port,
                modelId,
                apiKey,
                parallel,
                queue,
                queueTimeoutMs,
                contextLength,
                maxBodyBytes,
                defaultMaxTokens,
                storedResponses,
                corsOrigins,
                swaRollback,
                allowedHosts,
                readTimeoutMs,
                maxConnections,
                drainTimeoutMs,
                kvMemoryBytes);
    }

    public ServerOptions withPort(int p) {
        return new ServerOptions(
                host,
                p,
                modelId,
                apiKey,
                parallel,
                queue,
                queueTimeoutMs,
                contextLength,
                maxBodyBytes,
                defaultMaxTokens,
                storedResponses,
                corsOrigins,
                swaRollback,
                allowedHosts,
                readTimeoutMs,
                maxConnections,
                drainTimeoutMs,
                kvMemoryBytes);
    }

    public ServerOptions withModelId(String m) {
        return new ServerOptions(
                host,
                port,
                m,
                apiKey,
                parallel,
                queue,
                queueTimeoutMs,
                contextLength,
                maxBodyBytes,
                defaultMaxTokens,
                storedResponses,
                corsOrigins,
                swaRollback,
                allowedHosts,
                readTimeoutMs,
                maxConnections,
                drainTimeoutMs,
                kvMemoryBytes);
    }

    public ServerOptions withApiKey(String k) {
        return new ServerOptions(
                host,
                port,
                modelId,
                k,
                parallel,
                queue,
                queueTimeoutMs,
                contextLength,
                maxBodyBytes,
                defaultMaxTokens,
                storedResponses,
                corsOrigins,
                swaRollback,
                allowedHosts,
                readTimeoutMs,
                maxConnections,
                drainTimeoutMs,
                kvMemoryBytes);
    }

    public ServerOptions withParallel(int n) {
        return new ServerOptions(
                host,
                port,
                modelId,
                apiKey,
                n,
                queue,
                queueTimeoutMs,
                contextLength,
                maxBodyBytes,
                defaultMaxTokens,
                storedResponses,
                corsOrigins,
                swaRollback,
                allowedHosts,
                readTimeoutMs,
                maxConnections,
                drainTimeoutMs,
                kvMemoryBytes);
    }

    public ServerOptions withQueue(int n) {
        return new ServerOptions(
                host,
                port,
                modelId,
                apiKey,
                parallel,
                n,
                queueTimeoutMs,
                contextLength,
                maxBodyBytes,
                defaultMaxTokens,
                storedResponses,
                corsOrigins,
                swaRollback,
                allowedHosts,
                readTimeoutMs,
                maxConnections,
                drainTimeoutMs,
                kvMemoryBytes);
    }

    public ServerOptions withQueueTimeoutMs(long ms) {
        return new ServerOptions(
                host,
                port,
                modelId,
                apiKey,
                parallel,
                queue,
                ms,
                contextLength,
                maxBodyBytes,
                defaultMaxTokens,
                storedResponses,
                corsOrigins,
                swaRollback,
                allowedHosts,
                readTimeoutMs,
                maxConnections,
                drainTimeoutMs,
                kvMemoryBytes);
    }

    public ServerOptions withContextLength(int n) {
        return new ServerOptions(
                host,
                port,
                modelId,
                apiKey,
                parallel,
                queue,
                queueTimeoutMs,
                n,
                maxBodyBytes,
                defaultMaxTokens,
                storedResponses,
                corsOrigins,
                swaRollback,
                allowedHosts,
                readTimeoutMs,
                maxConnections,
                drainTimeoutMs,
                kvMemoryBytes);
    }

    public ServerOptions withMaxBodyBytes(int n) {
        return new ServerOptions(
                host,
                port,
                modelId,
                apiKey,
                parallel,
                queue,
                queueTimeoutMs,
                contextLength,
                n,
                defaultMaxTokens,
                storedResponses,
                corsOrigins,
                swaRollback,
                allowedHosts,
                readTimeoutMs,
                maxConnections,
                drainTimeoutMs,
                kvMemoryBytes);
    }

    public ServerOptions withDefaultMaxTokens(int n) {
        return new ServerOptions(
                host,
                port,
                modelId,
                apiKey,
                parallel,
                queue,
                queueTimeoutMs,
                contextLength,
                maxBodyBytes,
                n,
                storedResponses,
                corsOrigins,
                swaRollback,
                allowedHosts,
                readTimeoutMs,
                maxConnections,
                drainTimeoutMs,
                kvMemoryBytes);
    }

    public ServerOptions withStoredResponses(int n) {
        return new ServerOptions(
                host,
                port,
                modelId,
                apiKey,
                parallel,
                queue,
                queueTimeoutMs,
                contextLength,
                maxBodyBytes,
                defaultMaxTokens,
                n,
                corsOrigins,
                swaRollback,
                allowedHosts,
                readTimeoutMs,
                maxConnections,
                drainTimeoutMs,
                kvMemoryBytes);
    }

    public ServerOptions withCorsOrigins(String o) {
        return new ServerOptions(
                host,
                port,
                modelId,
                apiKey,
                parallel,
                queue,
                queueTimeoutMs,
                contextLength,
                maxBodyBytes,
                defaultMaxTokens,
                storedResponses,
                o,
                swaRollback,
                allowedHosts,
                readTimeoutMs,
                maxConnections,
                drainTimeoutMs,
                kvMemoryBytes);
    }

    public ServerOptions withSwaRollback(int n) {
        return new ServerOptions(
                host,
                port,
                modelId,
                apiKey,
                parallel,
                queue,
                queueTimeoutMs,
                contextLength,
                maxBodyBytes,
                defaultMaxTokens,
                storedResponses,
                corsOrigins,
                n,
                allowedHosts,
                readTimeoutMs,
                maxConnections,
                drainTimeoutMs,
                kvMemoryBytes);
    }

    public ServerOptions withAllowedHosts(String h) {
        return new ServerOptions(
                host,
                port,
                modelId,
                apiKey,
                parallel,
                queue,
                queueTimeoutMs,
                contextLength,
                maxBodyBytes,
                defaultMaxTokens,
                storedResponses,
                corsOrigins,
                swaRollback,
                h,
                readTimeoutMs,
                maxConnections,
                drainTimeoutMs,
                kvMemoryBytes);
    }

    public ServerOptions withReadTimeoutMs(long ms) {
        return new ServerOptions(
                host,
                port,
                modelId,
                apiKey,
                parallel,
                queue,
                queueTimeoutMs,
                contextLength,
                maxBodyBytes,
                defaultMaxTokens,
                storedResponses,
                corsOrigins,
                swaRollback,
                allowedHosts,
                ms,
                maxConnections,
                drainTimeoutMs,
                kvMemoryBytes);
    }

    public ServerOptions withMaxConnections(int n) {
        return new ServerOptions(
                host,
                port,
                modelId,
                apiKey,
                parallel,
                queue,
                queueTimeoutMs,
                contextLength,
                maxBodyBytes,
                defaultMaxTokens,
                storedResponses,
                corsOrigins,
                swaRollback,
                allowedHosts,
                readTimeoutMs,
                n,
                drainTimeoutMs,
                kvMemoryBytes);
    }

    public ServerOptions withDrainTimeoutMs(long ms) {
        return new ServerOptions(
                host,
                port,
                modelId,
                apiKey,
                parallel,
                queue,
                queueTimeoutMs,
                contextLength,
                maxBodyBytes,
                defaultMaxTokens,
                storedResponses,
                corsOrigins,
                swaRollback,
                allowedHosts,
                readTimeoutMs,
                maxConnections,
                ms,
                kvMemoryBytes);
    }

    public ServerOptions withKvMemoryBytes(long b) {
        return new ServerOptions(
                host,
                port,
                modelId,
                apiKey,
                parallel,
                queue,
                queueTimeoutMs,
                contextLength,
                maxBodyBytes,
                defaultMaxTokens,
                storedResponses,
                corsOrigins,
                swaRollback,
                allowedHosts,
                readTimeoutMs,
                maxConnections,
                drainTimeoutMs,
                b);
    }
}
