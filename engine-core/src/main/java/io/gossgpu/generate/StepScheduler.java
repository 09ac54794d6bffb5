package io.gossgpu.generate;

import io.gossgpu.GossException;
import io.gossgpu.forward.Executor;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Continuous batching: the sessions of one engine hand their forward passes here, and each step runs the decode tokens
 * of every session waiting for one, plus a bounded chunk of one waiting prompt, as one {@link Executor#step}: the
 * weights are read once for all of them, and a long prompt does not stall the streams already running (it goes on
 * chunk by chunk, one per step, beside them). A prompt with nothing beside it runs whole.
 *
 * <p>No thread of its own: a session's thread that finds no step running runs the next one itself (for every session
 * waiting), and returns when its own request is done; another waiting thread then runs the step after. Before a step,
 * the runner waits briefly (a fraction of the last step, at most {@link #MAX_GATHER_NANOS}) for every session that is
 * generating ({@link #join}) to hand in its next token, so that streams decoding side by side stay in one step instead
 * of alternating.
 *
 * <p>{@link #cancel} takes a session's waiting request out at once (its {@link #submit} throws {@link Cancelled}); a
 * prompt in the middle of its chunks stops after the current one. A request's failure (bad token ids, a context
 * overflow) is its own; a sequence whose numbers turn non-finite fails alone ({@link Executor.StepFailure}); a failing
 * device fails every request of the step.
 */
public final class StepScheduler {
    /**
     * The default prefill chunk: long enough that a prompt's chunk reads each expert for many rows, short enough that a
     * step beside running streams stays short.
     */
    public static final int DEFAULT_PREFILL_CHUNK = 256;
    /**
     * The request was cancelled ({@link #cancel}) before it finished, or its session was closed before it ran
     * ({@link Session#close}); nothing more of it runs.
     */
    public static final class Cancelled extends GossException {
        Cancelled() {
            this("cancelled");
        }

        Cancelled(String why) {
            super(why);
        }
    }

    /** The longest a step waits for the generating sessions to hand in their tokens. */
    static final long MAX_GATHER_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

    private static final long MIN_GATHER_NANOS = TimeUnit.MICROSECONDS.toNanos(200);

    private final Executor executor;
    private final int prefillChunk;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private final ArrayDeque<Pending> queue = new ArrayDeque<>();
    private final Set<Object> members = new HashSet<>();
    private boolean running;
    private long lastStepNanos = TimeUnit.MILLISECONDS.toNanos(2);
    private long steps, rows, sequences;

    /** A request waiting or running: how much of it has run, and how it ended. */
    private static final class Pending {
        final Object owner;
        final Executor.Request request;
        int done;
        int chunk;
        float[] allLogits;
        Executor.Result result;
        Throwable failure;
        boolean finished, inFlight, cancelled;

        Pending(Object owner, Executor.Request request) {
            this.owner = owner;
            this.request = request;
        }

        int remaining() {
            return request.tokens().length - done;
        }

        void finish(Executor.Result r, Throwable e) {
            result = r;
            failure = e;
            finished = true;
        }
    }

    /**
     * @param prefillChunk the most tokens of a waiting prompt that join a step beside other sequences (a prompt with
     *                     nothing beside it runs whole)
     */
    public StepScheduler(Executor executor, int prefillChunk) {
        if (prefillChunk <= 0) throw new GossException("prefill chunk must be positive, got " + prefillChunk);
        this.executor = executor;
        this.prefillChunk = prefillChunk;
    }

    public Executor executor() {
        return executor;
    }

    /** {@code owner} is generating: steps wait briefly for its next token (until {@link #leave}). */
    public void join(Object owner) {
        lock.lock();
        try {
            members.add(owner);
        } finally {
            lock.unlock();
        }
    }

    public void leave(Object owner) {
        lock.lock();
        try {
            members.remove(owner);
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Runs {@code request} (the next tokens of {@code owner}'s sequence) in a step beside whatever else is waiting, and
     * returns its result. Blocks until then; the calling thread may run steps for others meanwhile.
     *
     * @throws Cancelled when {@link #cancel} took it out first
     */
    public Executor.Result submit(Object owner, Executor.Request request) {
        int vocab = executor.weights().config().vocabSize();
        for (int id : request.tokens())
            if (id < 0 || id >= vocab)
                throw new GossException("token id " + id + " is outside the vocabulary (0.." + (vocab - 1) + ")");
        Pending p = new Pending(owner, request);
        lock.lock();
        try {
            queue.addLast(p);
            changed.signalAll();
            while (!p.finished) {
                if (!running) runStep();
                else if (!await(p)) break;
            }
        } finally {
            lock.unlock();
        }
        if (p.failure instanceof RuntimeException e) throw e;
        if (p.failure instanceof Error e) throw e;
        return p.result;
    }

    /** Waits for a change; on an interrupt a request not yet running is withdrawn (false: it was). */
    private boolean await(Pending p) {
        try {
            changed.await();
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            if (p.inFlight) {
                while (!p.finished) changed.awaitUninterruptibly();
                return true;
            }
            queue.remove(p);
            p.finish(null, new Cancelled());
            return false;
        }
    }

    /** Takes {@code owner}'s waiting request out at once; a prompt already running stops after its current chunk. */
    public void cancel(Object owner) {
        lock.lock();
        try {
            for (var it = queue.iterator(); it.hasNext(); ) {
                Pending p = it.next();
                if (p.owner != owner) continue;
                if (p.inFlight) {
                    p.cancelled = true;
                } else {
                    it.remove();
                    p.finish(null, new Cancelled());
                }
            }
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** Steps run, rows and sequences they held (for measurements and tests). */
    public record Stats(long steps, long rows, long sequences) {}

    public Stats stats() {
        lock.lock();
        try {
            return new Stats(steps, rows, sequences);
        } finally {
            lock.unlock();
        }
    }

    /** One step, run by the calling thread (lock held on entry and exit, released while the step runs). */
    private void runStep() {
        running = true;
        try {
            gather();
            List<Pending> picked = pick();
            if (picked.isEmpty()) return;
            List<Executor.Request> requests = new ArrayList<>(picked.size());
            int stepRows = 0;
            for (Pending p : picked) {
                p.inFlight = true;
                requests.add(chunkOf(p));
                stepRows += p.chunk;
            }
            Executor.Result[] results = null;
            Executor.StepFailure partial = null;
            Throwable failed = null;
            long t0 = System.nanoTime();
            lock.unlock();
            try {
                results = executor.step(requests);
            } catch (Executor.StepFailure f) {
                partial = f;
            } catch (RuntimeException | Error e) {
                failed = e;
            } finally {
                lock.lock();
            }
            lastStepNanos = System.nanoTime() - t0;
            steps++;
            rows += stepRows;
            sequences += picked.size();
            for (int i = 0; i < picked.size(); i++) {
                Pending p = picked.get(i);
                p.inFlight = false;
                Throwable e = failed != null ? failed : partial != null ? partial.failure(i) : null;
                Executor.Result r = partial != null ? partial.result(i) : results != null ? results[i] : null;
                if (e == null) e = advance(p, r);
                if (e != null || p.finished) {
                    queue.remove(p);
                    if (!p.finished) p.finish(null, e);
                }
            }
        } finally {
            running = false;
            changed.signalAll();
        }
    }

    /** Records one chunk's result; null, or the reason the request ends now (a cancel between chunks). */
    private static Throwable advance(Pending p, Executor.Result r) {
        Executor.Request q = p.request;
        if (q.output() == Executor.Output.ALL_LOGITS) {
            if (p.allLogits == null) p.allLogits = r.logits();
            else {
                float[] more = Arrays.copyOf(p.allLogits, p.allLogits.length + r.logits().length);
                System.arraycopy(r.logits(), 0, more, p.allLogits.length, r.logits().length);
                p.allLogits = more;
            }
        }
        p.done += p.chunk;
        if (p.remaining() == 0) {
            p.finish(q.output() == Executor.Output.ALL_LOGITS ? new Executor.Result(p.allLogits, null) : r, null);
            return null;
        }
        return p.cancelled ? new Cancelled() : null;
    }

    /** The next chunk of {@code p} as a request of its own ({@link Pending#chunk} tokens; the request's output on its last). */
    private static Executor.Request chunkOf(Pending p) {
        Executor.Request q = p.request;
        if (p.done == 0 && p.chunk == q.tokens().length) return q;
        boolean last = p.done + p.chunk == q.tokens().length;
        Executor.Output out = last || q.output() == Executor.Output.ALL_LOGITS ? q.output() : Executor.Output.NONE;
        return new Executor.Request(
                Arrays.copyOfRange(q.tokens(), p.done, p.done + p.chunk),
                q.cache(),
                q.start() + p.done,
                out,
                last ? q.sampling() : null);
    }

    /**
     * Waits (up to a fraction of the last step) until every generating session has a request waiting, so that streams
     * decoding side by side share the step.
     */
    private void gather() {
        long bound = Math.max(MIN_GATHER_NANOS, Math.min(MAX_GATHER_NANOS, lastStepNanos / 8));
        long deadline = System.nanoTime() + bound;
        while (!allMembersWaiting()) {
            long left = deadline - System.nanoTime();
            if (left <= 0) return;
            try {
                changed.awaitNanos(left);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    private boolean allMembersWaiting() {
        for (Object m : members) {
            boolean waiting = false;
            for (Pending p : queue)
                if (p.owner == m) {
                    waiting = true;
                    break;
                }
            if (!waiting) return false;
        }
        return true;
    }

    /**
     * The step's requests: every waiting single token (decode), and the oldest waiting prompt: whole when nothing else
     * waits or generates, else its next {@link #prefillChunk} tokens.
     */
    private List<Pending> pick() {
        List<Pending> picked = new ArrayList<>();
        Pending prompt = null;
        for (Pending p : queue) {
            if (p.remaining() == 1) {
                p.chunk = 1;
                picked.add(p);
            } else if (prompt == null) {
                prompt = p;
            }
        }
        if (prompt != null) {
            boolean alone = picked.isEmpty()
                    && queue.size() == 1
                    && (members.isEmpty() || members.size() == 1 && members.contains(prompt.owner));
            prompt.chunk = alone ? prompt.remaining() : Math.min(prompt.remaining(), prefillChunk);
            picked.add(prompt);
        }
        return picked;
    }
}
