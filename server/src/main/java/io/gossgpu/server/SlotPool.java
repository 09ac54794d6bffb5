package io.gossgpu.server;

import io.gossgpu.api.Chat;
import io.gossgpu.api.ChatOptions;
import io.gossgpu.api.Completion;
import io.gossgpu.api.Engine;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A fixed number of slots, each generating one request at a time with its own KV cache (a {@link Chat} and, made
 * when first needed, a {@link Completion}). A request takes the free slot whose cached conversation its prompt
 * continues with the most reusable tokens (so a multi-turn client keeps landing on its own history, also when it
 * sends the last reply back without its reasoning), else the least recently used free slot; it waits in a bounded
 * queue when every slot is busy, and is refused past that.
 */
final class SlotPool implements AutoCloseable {
    /** Every slot is busy and the queue is full. */
    static final class Full extends RuntimeException {
        Full() { super("all slots busy and the queue is full", null, false, false); }
    }

    /** One slot; use it only between {@link #acquire} and {@link #release}. */
    final class Slot {
        final int index;
        private Chat chat;
        private Completion completion;
        private boolean busy;
        private long lastUsed;
        /** Set when the server shuts down: the generation on this slot stops at its next token. */
        volatile boolean stopping;
        /** Tokens this slot's KV cache holds after its last generation (for the KV cache metrics). */
        volatile int cachedTokens;

        Slot(int index) { this.index = index; }

        Chat chat() {
            if (chat == null) chat = engine.newChat(sessionOptions);
            return chat;
        }

        Completion completion() {
            if (completion == null) completion = engine.newCompletion(sessionOptions);
            return completion;
        }

        /**
         * Tokens of {@code prompt} this slot's cache would serve, counted only when the prompt continues the slot's
         * conversation ({@link Chat#continues}): a prefix shared with another client's conversation (the same system
         * message) is reused once the request lands here, but is no reason to evict that conversation.
         */
        int reusable(int[] prompt) {
            return prompt == null || chat == null || !chat.continues(prompt) ? 0 : chat.cachedPrefixLength(prompt);
        }

        /** Runs {@code work} (a generation on this slot) on a platform thread, see {@link SlotPool#onPlatformThread}. */
        <T> T run(Supplier<T> work) {
            return onPlatformThread(work);
        }

        private void cancel() {
            stopping = true;
            if (chat != null) chat.cancel();
            if (completion != null) completion.cancel();
        }

        private void closeSessions() {
            if (chat != null) chat.close();
            if (completion != null) completion.close();
            chat = null;
            completion = null;
        }
    }

    private final Engine engine;
    private final ChatOptions sessionOptions;
    /** Platform threads that run the generations, at most one per busy slot (see {@link #onPlatformThread}). */
    private final ExecutorService generators = Executors.newCachedThreadPool(Thread.ofPlatform().name("goss-generate-", 0).daemon().factory());
    private final int maxQueue;
    private final long timeoutMs;
    private final List<Slot> slots = new ArrayList<>();
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition freed = lock.newCondition();
    private int waiting;
    private long clock;
    private boolean closed;

    SlotPool(Engine engine, int parallel, int maxQueue, long timeoutMs, int contextLength, int swaRollback) {
        this.engine = engine;
        this.sessionOptions = ChatOptions.defaults().withContextLength(contextLength).withSwaRollback(swaRollback);
        this.maxQueue = maxQueue;
        this.timeoutMs = timeoutMs;
        for (int i = 0; i < parallel; i++) slots.add(new Slot(i));
    }

    /**
     * Takes a slot for a request whose rendered chat prompt is {@code prompt} (null for raw completions).
     *
     * @throws Full when every slot is busy and {@code queue} requests already wait
     * @throws ApiError 503 when no slot came free in time
     */
    Slot acquire(int[] prompt) throws InterruptedException {
        lock.lock();
        try {
            if (closed) throw new ApiError(503, "server_error", "shutting_down", null, "the server is shutting down", "1");
            Slot s = pick(prompt);
            if (s != null) return take(s);
            if (waiting >= maxQueue) throw new Full();
            waiting++;
            try {
                long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
                while (true) {
                    long left = deadline - System.nanoTime();
                    if (left <= 0) throw new ApiError(503, "server_error", "queue_timeout", null,
                            "no slot came free within " + timeoutMs + " ms", "1");
                    freed.awaitNanos(left);
                    if (closed) throw new ApiError(503, "server_error", "shutting_down", null, "the server is shutting down", "1");
                    s = pick(prompt);
                    if (s != null) return take(s);
                }
            } finally {
                waiting--;
            }
        } finally {
            lock.unlock();
        }
    }

    void release(Slot s) {
        lock.lock();
        try {
            s.busy = false;
            s.lastUsed = ++clock;
            freed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    private Slot take(Slot s) {
        s.busy = true;
        return s;
    }

    private Slot pick(int[] prompt) {
        Slot best = null;
        int bestReuse = -1;
        for (Slot s : slots) {
            if (s.busy) continue;
            int r = s.reusable(prompt);
            if (r > bestReuse || (r == bestReuse && s.lastUsed < best.lastUsed)) {
                best = s;
                bestReuse = r;
            }
        }
        return best;
    }

    int size() { return slots.size(); }

    int busy() {
        lock.lock();
        try {
            return (int) slots.stream().filter(s -> s.busy).count();
        } finally {
            lock.unlock();
        }
    }

    int waiting() {
        lock.lock();
        try {
            return waiting;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Runs {@code work} on a platform thread and waits for it. Requests are handled on virtual threads, and a backend's
     * native calls (a GPU driver waiting for its kernels) would pin a virtual thread's carrier for a whole generation:
     * a few such generations would leave no carrier for {@code /health} and the other requests.
     */
    private <T> T onPlatformThread(Supplier<T> work) {
        if (!Thread.currentThread().isVirtual()) return work.get();
        Future<T> f = generators.submit(work::get);
        try {
            return f.get();
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException r) throw r;
            if (e.getCause() instanceof Error err) throw err;
            throw new IllegalStateException(e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while generating", e);
        }
    }

    /** Tokens held in all slots' KV caches. */
    int cachedTokens() {
        int n = 0;
        for (Slot s : slots) n += s.cachedTokens;
        return n;
    }

    /** Refuses new requests from now on and wakes the queued ones (they get 503); running ones go on. */
    void stopAccepting() {
        lock.lock();
        try {
            closed = true;
            freed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** Waits up to {@code waitMs} for every slot to be free; true if they are. */
    boolean awaitIdle(long waitMs) {
        lock.lock();
        try {
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMs);
            while (slots.stream().anyMatch(s -> s.busy)) {
                long left = deadline - System.nanoTime();
                if (left <= 0) return false;
                try {
                    freed.awaitNanos(left);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return false;
                }
            }
            return true;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Ends the generations still running (each stops at its next token and its request ends with an error, see
     * {@link Generation.Outcome#aborted()}) and waits up to {@code waitMs} for them; true if every slot is free.
     */
    boolean abort(long waitMs) {
        lock.lock();
        try {
            for (Slot s : slots) if (s.busy) s.cancel();
        } finally {
            lock.unlock();
        }
        return awaitIdle(waitMs);
    }

    /** Closes every slot's sessions and the generation threads; only when no slot is busy. */
    void closeSessions() {
        lock.lock();
        try {
            for (Slot s : slots) s.closeSessions();
        } finally {
            lock.unlock();
        }
        generators.shutdown();
    }

    /** Refuses new requests, ends the running ones (waiting up to 10 s), then closes the sessions. */
    @Override
    public void close() {
        stopAccepting();
        if (abort(10_000)) closeSessions();
    }
}
