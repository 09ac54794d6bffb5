package io.gossgpu.springai;

import io.gossgpu.api.Chat;
import io.gossgpu.api.ChatOptions;
import io.gossgpu.api.Engine;

import java.util.Iterator;
import java.util.LinkedList;

/**
 * The chats a model replies with. Spring AI sends the whole conversation with each request; a chat keeps its KV
 * cache as far as the next conversation repeats the last one, so a free chat with the request's options is reused
 * (sequential requests cost only what was added) and a new one is opened only when none is free (a chat serves
 * one reply at a time, and its options are fixed). At most {@link #MAX_FREE} free chats keep their memory.
 */
final class ChatPool implements AutoCloseable {
    static final int MAX_FREE = 4;

    private record Free(ChatOptions options, Chat chat) {}

    private final Engine engine;
    private final boolean ownsEngine;
    private final LinkedList<Free> free = new LinkedList<>(); // most recently used first
    private boolean closed;

    ChatPool(Engine engine, boolean ownsEngine) {
        this.engine = engine;
        this.ownsEngine = ownsEngine;
    }

    synchronized Chat take(ChatOptions options) {
        if (closed) throw new IllegalStateException("the goss-gpu chat model is closed");
        for (Iterator<Free> it = free.iterator(); it.hasNext(); ) {
            Free f = it.next();
            if (f.options().equals(options)) {
                it.remove();
                return f.chat();
            }
        }
        return engine.newChat(options);
    }

    synchronized void give(ChatOptions options, Chat chat) {
        if (closed) {
            chat.close();
            return;
        }
        free.addFirst(new Free(options, chat));
        while (free.size() > MAX_FREE) free.removeLast().chat().close();
    }

    @Override
    public synchronized void close() {
        if (closed) return;
        closed = true;
        for (Free f : free) f.chat().close();
        free.clear();
        if (ownsEngine) engine.close();
    }
}
