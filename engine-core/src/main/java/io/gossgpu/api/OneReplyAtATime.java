package io.gossgpu.api;

import io.gossgpu.GossException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The rule a {@link Chat} and a {@link Completion} keep: one reply at a time, none once closed. A call that would start
 * a second reply while one is under way (from another thread, or from a listener of the running one) is refused at
 * once with a {@link GossException}, before it changes anything; so is any reply after close.
 */
final class OneReplyAtATime {
    private final String what;
    private final AtomicBoolean replying = new AtomicBoolean();
    private volatile boolean closed;

    /** @param what the object, as messages name it ("chat", "completion") */
    OneReplyAtATime(String what) {
        this.what = what;
    }

    /** Claims the object for a reply; {@link #end} gives it back. */
    void begin() {
        if (closed) throw new GossException("this " + what + " is closed");
        if (!replying.compareAndSet(false, true))
            throw new GossException("this " + what + " is already replying: it takes one request at a time "
                    + "(wait for its reply, or open one " + what + " per thread)");
        if (closed) {
            replying.set(false);
            throw new GossException("this " + what + " is closed");
        }
    }

    void end() {
        replying.set(false);
    }

    void close() {
        closed = true;
    }
}
