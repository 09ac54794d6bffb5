package io.gossgpu.langchain4j;

import io.gossgpu.api.Chat;
import io.gossgpu.api.ChatOptions;
import io.gossgpu.api.Engine;

import java.util.ArrayDeque;
import java.util.Deque;

/**
 * The chats a model replies with. LangChain4j sends the whole conversation with each request; a chat keeps its KV
 * cache as far as the next conversation repeats the last one, so a free chat is reused (sequential requests cost
 * only what was added) and a new one is opened only while the others are busy (a chat serves one reply at a time).
 */
final class ChatPool implements AutoCloseable {
    private final Engine engine;
    private final boolean ownsEngine;
    private final ChatOptions options;
    private final Deque<Chat> free = new ArrayDeque<>();
    private boolean closed;

    ChatPool(Engine engine, boolean ownsEngine, ChatOptions options) {
        this.engine = engine;
        this.ownsEngine = ownsEngine;
        this.options = options;
    }

    /** The model's options (a request's own parameters are applied over them). */
    ChatOptions options() {
        return options;
    }

    synchronized Chat take() {
        if (closed) throw new IllegalStateException("the goss-gpu chat model is closed");
        Chat c = free.pollFirst();
        return c != null ? c : engine.newChat(options);
    }

    synchronized void give(Chat c) {
        if (closed) c.close();
        else free.addFirst(c);
    }

    @Override
    public synchronized void close() {
        if (closed) return;
        closed = true;
        for (Chat c : free) c.close();
        free.clear();
        if (ownsEngine) engine.close();
    }
}
