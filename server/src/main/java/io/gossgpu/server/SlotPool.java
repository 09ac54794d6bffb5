package io.gossgpu.server;

import io.gossgpu.GossException;
import io.gossgpu.api.Chat;
import io.gossgpu.api.ChatOptions;
import io.gossgpu.api.ChatPool;
import io.gossgpu.api.Completion;
import io.gossgpu.api.Engine;
import io.gossgpu.backend.KvCacheSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/**
 * A fixed number of slots, each generating one request at a time with its own KV cache (a {@link Chat} and, made
 * when first needed, a {@link Completion}). A request takes the free slot whose cached conversation its prompt
 * continues with the most reusable tokens (so a multi-turn client keeps landing on its own history, also when it
 * sends the last reply back without its reasoning), else the least recently used free slot; it waits in a bounded
 * queue when every slot is busy, and is refused past that. The slots' generations run side by side in the engine's
 * steps (continuous batching: the engine's step scheduler); a slot is free again as soon as its
 * generation ends, finished or cancelled.
 *
 * <p>Admission is bounded by KV memory: the caches the slots hold (and are about to make) stay within
 * {@code kvBudget} bytes. A request whose slot would need a new cache past that drops the caches of idle slots, least
 * recently used first; when that is not enough (busy slots hold the memory) it waits in the queue like a request that
 * found every slot busy. A cache the device cannot hold after all (no budget set, or a budget above what the device
 * has) also drops the idle slots' caches and tries once more before the request fails with 503.
 */
final class SlotPool implements AutoCloseable {
    /** Every slot is busy and the queue is full. */
    static final class Full extends RuntimeException {
        Full() {
            super("all slots busy and the queue is full", null, false, false);
        }
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
        /** Whether this slot's chat / completion cache counts in {@link #held} (made, or reserved at admission). */
        private boolean chatHeld, completionHeld;

        Slot(int index) {
            this.index = index;
        }

        Chat chat() {
            if (chat == null) chat = make(this, true, () -> engine.newChat(sessionOptions));
            return chat;
        }

        Completion completion() {
            if (completion == null) completion = make(this, false, () -> engine.newCompletion(sessionOptions));
            return completion;
        }

        /**
         * Tokens of {@code prompt} this slot's cache would serve, by the api pool's rule ({@link
         * ChatPool#reusableTokens}): a prefix shared with another client's conversation (the same system message) is
         * reused once the request lands here, but is no reason to evict that conversation.
         */
        int reusable(int[] prompt) {
            return ChatPool.reusableTokens(chat, prompt);
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
            dropChat();
            dropCompletion();
        }

        private void dropChat() {
            if (chat != null) chat.close();
            chat = null;
            cachedTokens = 0;
            if (chatHeld) held -= chatBytes;
            chatHeld = false;
        }

        private void dropCompletion() {
            if (completion != null) completion.close();
            completion = null;
            if (completionHeld) held -= completionBytes;
            completionHeld = false;
        }
    }

    private final Engine engine;
    private final ChatOptions sessionOptions;
    /** Platform threads that run the generations, at most one per busy slot (see {@link #onPlatformThread}). */
    private final ExecutorService generators = Executors.newCachedThreadPool(
            Thread.ofPlatform().name("goss-generate-", 0).daemon().factory());

    private final int maxQueue;
    private final long timeoutMs;
    private final List<Slot> slots = new ArrayList<>();
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition freed = lock.newCondition();
    private int waiting;
    private long clock;
    private boolean closed;
    /** Bytes of a slot's chat cache and of its completion cache (no rollback slack), and the most all slots may hold. */
    private final long chatBytes, completionBytes, kvBudget;
    /** Bytes of the caches the slots hold or have been admitted to make. */
    private long held;

    /**
     * @param kvBudget the most bytes the slots' KV caches may take together; 0 for no bound but the device's
     * @throws io.gossgpu.GossException when the budget cannot hold even one slot's cache, or the context is beyond the
     *         model's maximum (the engine's own check, {@link Engine#kvCacheSpec})
     */
    SlotPool(
            Engine engine,
            int parallel,
            int maxQueue,
            long timeoutMs,
            int contextLength,
            int swaRollback,
            long kvBudget) {
        this.engine = engine;
        this.sessionOptions =
                ChatOptions.defaults().withContextLength(contextLength).withSwaRollback(swaRollback);
        this.maxQueue = maxQueue;
        this.timeoutMs = timeoutMs;
        KvCacheSpec chatSpec = engine.kvCacheSpec(contextLength, swaRollback);
        this.chatBytes = chatSpec.bytes();
        this.completionBytes = engine.kvCacheSpec(contextLength, 0).bytes();
        this.kvBudget = kvBudget > 0 ? kvBudget : Long.MAX_VALUE;
        if (this.kvBudget < Math.max(chatBytes, completionBytes))
            throw new GossException(
                    "--kv-memory " + KvCacheSpec.humanBytes(kvBudget) + " cannot hold one slot's KV cache: "
                            + chatSpec.describe() + "; raise it or lower --context / --swa-rollback");
        for (int i = 0; i < parallel; i++) slots.add(new Slot(i));
    }

    /** How many slots' chat caches the budget holds at once (the slot count when it holds them all). */
    int cachesInBudget() {
        return (int) Math.min(slots.size(), kvBudget / chatBytes);
    }

    long chatCacheBytes() {
        return chatBytes;
    }

    /** Bytes of the caches the slots hold or were admitted to make (never above the budget). */
    long heldBytes() {
        lock.lock();
        try {
            return held;
        } finally {
            lock.unlock();
        }
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
            if (closed)
                throw new ApiError(503, "server_error", "shutting_down", null, "the server is shutting down", "1");
            Slot s = pick(prompt);
            if (s != null) return take(s, prompt != null);
            if (waiting >= maxQueue) throw new Full();
            waiting++;
            try {
                long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
                while (true) {
                    long left = deadline - System.nanoTime();
                    if (left <= 0)
                        throw new ApiError(
                                503,
                                "server_error",
                                "queue_timeout",
                                null,
                                "no slot came free within " + timeoutMs + " ms",
                                "1");
                    freed.awaitNanos(left);
                    if (closed)
                        throw new ApiError(
                                503, "server_error", "shutting_down", null, "the server is shutting down", "1");
                    s = pick(prompt);
                    if (s != null) return take(s, prompt != null);
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

    /** Marks {@code s} busy and admits the cache it will make ({@code chat}, else its completion's) to the budget. */
    private Slot take(Slot s, boolean chat) {
        s.busy = true;
        if (chat && !s.chatHeld) {
            makeRoom(chatBytes, s, true);
            s.chatHeld = true;
            held += chatBytes;
        } else if (!chat && !s.completionHeld) {
            makeRoom(completionBytes, s, false);
            s.completionHeld = true;
            held += completionBytes;
        }
        return s;
    }

    /** Whether {@code s} can take a request that needs its chat (or completion) cache: it has it, or room can be made. */
    private boolean admissible(Slot s, boolean chat) {
        if (chat ? s.chatHeld : s.completionHeld) return true;
        long need = chat ? chatBytes : completionBytes, freeable = 0;
        for (Slot o : slots) {
            if (o.busy) continue;
            if (o.chatHeld && !(o == s && chat)) freeable += chatBytes;
            if (o.completionHeld && !(o == s && !chat)) freeable += completionBytes;
        }
        return held - freeable + need <= kvBudget;
    }

    /** Drops idle slots' caches, least recently used first (never the one {@code s} is about to use), until {@code need} fits. */
    private void makeRoom(long need, Slot s, boolean chat) {
        while (held + need > kvBudget) {
            Slot victim = null;
            for (Slot o : slots) {
                if (o.busy && o != s) continue;
                boolean has = o == s ? (chat ? o.completionHeld : o.chatHeld) : o.chatHeld || o.completionHeld;
                if (has && (victim == null || o.lastUsed < victim.lastUsed)) victim = o;
            }
            if (victim == null) return; // admissible() said it fits: nothing left to drop
            if (victim == s) {
                if (chat) victim.dropCompletion();
                else victim.dropChat();
            } else {
                victim.closeSessions();
            }
        }
    }

    /**
     * Makes a slot's chat or completion; when the device cannot hold its cache, drops the idle slots' caches and tries
     * once more, then answers 503. The cache was admitted to the budget in {@link #take}.
     */
    private <T> T make(Slot s, boolean chat, Supplier<T> session) {
        try {
            return session.get();
        } catch (GossException first) {
            lock.lock();
            try {
                for (Slot o : slots) if (!o.busy) o.closeSessions();
            } finally {
                lock.unlock();
            }
            try {
                return session.get();
            } catch (GossException again) {
                lock.lock();
                try {
                    if (chat) s.dropChat();
                    else s.dropCompletion();
                } finally {
                    lock.unlock();
                }
                throw new ApiError(
                        503,
                        "server_error",
                        "kv_memory",
                        null,
                        "no memory for this request's KV cache now: " + again.getMessage(),
                        "5");
            }
        }
    }

    private Slot pick(int[] prompt) {
        boolean chat = prompt != null;
        Slot best = null;
        int bestReuse = -1;
        for (Slot s : slots) {
            if (s.busy || !admissible(s, chat)) continue;
            int r = s.reusable(prompt);
            if (r > bestReuse || (r == bestReuse && s.lastUsed < best.lastUsed)) {
                best = s;
                bestReuse = r;
            }
        }
        return best;
    }

    int size() {
        return slots.size();
    }

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
