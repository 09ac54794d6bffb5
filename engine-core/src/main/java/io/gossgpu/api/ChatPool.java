package io.gossgpu.api;

import io.gossgpu.GossException;
import io.gossgpu.backend.KvCacheSpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Chats kept open for requests that each bring a whole conversation (servers, framework models), so that the next
 * request of a conversation prefills only what was added. The pool has a fixed number of slots; a slot serves one
 * request at a time with a chat of its own, opened when the slot first needs it.
 *
 * <p>A request takes the free slot whose chat its prompt continues with the most cached tokens
 * ({@link #reusableTokens}); a chat that merely shares the system message is no reason to take its slot, since that
 * would evict the conversation there. With no such slot it takes the least recently used free one, an unused one
 * first, so open chats keep their conversations while there is room. When every slot is busy it waits.
 *
 * <p>KV memory: with a budget, only as many chats stay open as their caches fit. A slot that needs a new chat past
 * that closes the least recently used idle chat first, and is not taken while busy slots hold all the memory. When
 * the device cannot hold a new chat's cache after all, the idle chats are closed and it is tried once more.
 */
public final class ChatPool implements AutoCloseable {
    private final Engine engine;
    private final ChatOptions options;
    private final List<PoolSlot> slots = new ArrayList<>();
    private final long chatBytes;
    private final int chatsInBudget;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition freed = lock.newCondition();
    /** Chats open or reserved by a slot that was taken to open one. */
    private int held;

    private int waiting;
    private long clock;
    private boolean closed;

    /** {@code slots} slots whose chats are opened with {@code options}, with no bound on KV memory but the device's. */
    public ChatPool(Engine engine, ChatOptions options, int slots) {
        this(engine, options, slots, 0);
    }

    /**
     * {@code slots} slots whose chats are opened with {@code options} (each request replies with its own options, but
     * the context length and sliding-window slack are the pool's), their KV caches within {@code kvBytes} together.
     *
     * @param kvBytes the most bytes the chats' KV caches may take together; 0 for no bound but the device's
     * @throws GossException when {@code kvBytes} cannot hold one chat's cache
     */
    public ChatPool(Engine engine, ChatOptions options, int slots, long kvBytes) {
        if (slots < 1) throw new IllegalArgumentException("a chat pool needs a slot, got " + slots);
        this.engine = engine;
        this.options = options;
        KvCacheSpec spec = engine.kvCacheSpec(options.contextLength(), options.swaRollback());
        this.chatBytes = spec.bytes();
        if (kvBytes > 0 && kvBytes < chatBytes)
            throw new GossException("a KV budget of " + KvCacheSpec.humanBytes(kvBytes) + " cannot hold one chat's"
                    + " KV cache: " + spec.describe());
        this.chatsInBudget = kvBytes > 0 ? (int) Math.min(slots, kvBytes / chatBytes) : slots;
        for (int i = 0; i < slots; i++) this.slots.add(new PoolSlot(i));
    }

    /**
     * Tokens of {@code prompt} that {@code chat}'s cache would serve, counted only when the prompt continues the chat's
     * conversation ({@link Chat#continues}); 0 for no chat or no prompt.
     */
    public static int reusableTokens(Chat chat, int[] prompt) {
        return prompt == null || chat == null || !chat.continues(prompt) ? 0 : chat.cachedPrefixLength(prompt);
    }

    /**
     * A slot for a request whose prompt is {@code prompt} ({@link Conversation#promptTokens}; null when the choice
     * does not matter), waiting as long as every slot is busy.
     *
     * @throws GossException when the pool is or gets closed
     */
    public Lease take(int[] prompt) throws InterruptedException {
        return take(prompt, null);
    }

    /**
     * {@link #take(int[])} waiting at most {@code timeout} (null for as long as it takes; zero not at all).
     *
     * @return the slot, or null when none came free in time
     */
    public Lease take(int[] prompt, Duration timeout) throws InterruptedException {
        lock.lock();
        try {
            long deadline = timeout == null ? 0 : System.nanoTime() + timeout.toNanos();
            boolean counted = false;
            try {
                while (true) {
                    if (closed) throw new GossException("the chat pool is closed");
                    PoolSlot s = pick(prompt);
                    if (s != null) return lease(s);
                    long left = timeout == null ? Long.MAX_VALUE : deadline - System.nanoTime();
                    if (left <= 0) return null;
                    if (!counted) waiting++;
                    counted = true;
                    if (timeout == null) freed.await();
                    else freed.awaitNanos(left);
                }
            } finally {
                if (counted) waiting--;
            }
        } finally {
            lock.unlock();
        }
    }

    private PoolSlot pick(int[] prompt) {
        PoolSlot best = null;
        int bestReuse = -1;
        for (PoolSlot s : slots) {
            if (s.busy || !admissible(s)) continue;
            int r = reusableTokens(s.chat, prompt);
            if (r > bestReuse || (r == bestReuse && s.lastUsed < best.lastUsed)) {
                best = s;
                bestReuse = r;
            }
        }
        return best;
    }

    /** Whether {@code s} holds its chat, or room can be made for one (closing another idle slot's). */
    private boolean admissible(PoolSlot s) {
        if (s.holdsChat || held < chatsInBudget) return true;
        for (PoolSlot o : slots) if (o != s && !o.busy && o.holdsChat) return true;
        return false;
    }

    /** Marks {@code s} busy and reserves its chat, closing the least recently used idle chat if the budget is full. */
    private Lease lease(PoolSlot s) {
        s.busy = true;
        if (!s.holdsChat) {
            if (held >= chatsInBudget) {
                PoolSlot victim = null;
                for (PoolSlot o : slots)
                    if (!o.busy && o.holdsChat && (victim == null || o.lastUsed < victim.lastUsed)) victim = o;
                victim.drop(); // admissible() found one
            }
            s.holdsChat = true;
            held++;
        }
        return new Lease(s);
    }

    /** Opens {@code s}'s chat; when the device cannot hold its cache, closes the idle chats and tries once more. */
    private Chat open(PoolSlot s) {
        try {
            return engine.newChat(options);
        } catch (GossException first) {
            lock.lock();
            try {
                for (PoolSlot o : slots) if (!o.busy) o.drop();
            } finally {
                lock.unlock();
            }
            try {
                return engine.newChat(options);
            } catch (GossException again) {
                lock.lock();
                try {
                    s.drop();
                } finally {
                    lock.unlock();
                }
                throw again;
            }
        }
    }

    private void release(PoolSlot s) {
        lock.lock();
        try {
            s.busy = false;
            s.lastUsed = ++clock;
            s.cachedTokens = s.chat == null ? 0 : s.chat.cachedTokens();
            if (closed) s.drop();
            freed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** Slots in all. */
    public int size() {
        return slots.size();
    }

    /** How many chats' caches the budget holds at once (the slot count when it holds them all). */
    public int chatsInBudget() {
        return chatsInBudget;
    }

    /** Bytes of one chat's KV cache. */
    public long chatBytes() {
        return chatBytes;
    }

    /** Slots serving a request now. */
    public int busy() {
        return locked(() -> (int) slots.stream().filter(s -> s.busy).count());
    }

    /** Requests waiting in {@link #take} for a slot. */
    public int waiting() {
        return locked(() -> waiting);
    }

    /** Chats open, or reserved by a slot about to open one. */
    public int heldChats() {
        return locked(() -> held);
    }

    /** Tokens the idle chats' caches hold (a busy chat counts what it held when its last request ended). */
    public int cachedTokens() {
        return locked(() -> slots.stream().mapToInt(s -> s.cachedTokens).sum());
    }

    private int locked(java.util.function.IntSupplier read) {
        lock.lock();
        try {
            return read.getAsInt();
        } finally {
            lock.unlock();
        }
    }

    /** Refuses new requests (waiting ones get a GossException) and closes the idle chats; busy ones on release. */
    @Override
    public void close() {
        lock.lock();
        try {
            closed = true;
            for (PoolSlot s : slots) if (!s.busy) s.drop();
            freed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** One slot; its fields change under the pool's lock. */
    private final class PoolSlot {
        final int index;
        Chat chat;
        boolean busy;
        /** Whether this slot's chat counts in {@link #held} (open, or reserved when the slot was taken). */
        boolean holdsChat;

        long lastUsed;
        int cachedTokens;

        PoolSlot(int index) {
            this.index = index;
        }

        void drop() {
            if (chat != null) chat.close();
            chat = null;
            cachedTokens = 0;
            if (holdsChat) held--;
            holdsChat = false;
        }
    }

    /** A slot taken for one request; {@link #close} gives it back. */
    public final class Lease implements AutoCloseable {
        private final PoolSlot slot;
        private boolean released;

        private Lease(PoolSlot slot) {
            this.slot = slot;
        }

        /** The slot's number, 0 to {@link #size()} - 1 (for logs). */
        public int index() {
            return slot.index;
        }

        /** The slot's chat, opened on first use. */
        public Chat chat() {
            if (released) throw new IllegalStateException("the slot was given back");
            if (slot.chat == null) slot.chat = open(slot);
            return slot.chat;
        }

        /** Gives the slot back (once; later calls do nothing). */
        @Override
        public void close() {
            if (released) return;
            released = true;
            release(slot);
        }
    }
}
