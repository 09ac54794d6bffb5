package io.gossgpu.api;

import io.gossgpu.backend.Backend;

import java.util.function.Supplier;

/**
 * Test support, not for applications: opens an {@link Engine} on a backend the caller makes, so that tests of
 * code built on the public API (the HTTP server) can wrap the backend, e.g. to script the greedy choices of a
 * random-weight model so it writes well-formed Harmony.
 */
public final class EngineTesting {
    private EngineTesting() {}

    /** {@link Engine#open(EngineOptions)} with the backend made by {@code backendFactory} instead of the named one. */
    public static Engine open(EngineOptions options, Supplier<Backend> backendFactory) {
        return Engine.open(options, backendFactory);
    }
}
