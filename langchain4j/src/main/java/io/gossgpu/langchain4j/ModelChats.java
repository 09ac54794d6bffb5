package io.gossgpu.langchain4j;

import io.gossgpu.GossException;
import io.gossgpu.api.ChatOptions;
import io.gossgpu.api.ChatPool;
import io.gossgpu.api.Engine;

/** A model's chat pool, its options, and the engine when the model opened it. */
final class ModelChats implements AutoCloseable {
    /** Chats a model keeps: as many requests run at once, and the next ones wait. */
    static final int SLOTS = 4;

    private final ChatPool pool;
    private final ChatOptions options;
    private final Engine ownedEngine;

    /** Chats of {@code engine}, which this closes when {@code ownsEngine}. */
    ModelChats(Engine engine, boolean ownsEngine, ChatOptions options) {
        try {
            this.pool = new ChatPool(engine, options, SLOTS);
        } catch (RuntimeException e) {
            if (ownsEngine) engine.close();
            throw e;
        }
        this.options = options;
        this.ownedEngine = ownsEngine ? engine : null;
    }

    /** The model's options (a request's own parameters are applied over them). */
    ChatOptions options() {
        return options;
    }

    /** The slot for a request with {@code prompt}, waiting while all are busy. */
    ChatPool.Lease take(int[] prompt) {
        try {
            return pool.take(prompt);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new GossException("interrupted while waiting for a free chat", e);
        }
    }

    @Override
    public void close() {
        pool.close();
        if (ownedEngine != null) ownedEngine.close();
    }
}
