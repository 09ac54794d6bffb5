package io.gossgpu.cli;

import sun.misc.Signal;
import sun.misc.SignalHandler;

/**
 * Ctrl-C while a reply is generated stops the reply, not the program; a second Ctrl-C (or one
 * outside a reply) exits as usual.
 */
final class Interrupt implements AutoCloseable {
    private final SignalHandler previous;

    private Interrupt(Runnable onInterrupt) {
        SignalHandler prev;
        try {
            prev = Signal.handle(new Signal("INT"), s -> {
                onInterrupt.run();
                restoreDefault();
            });
        } catch (IllegalArgumentException unsupported) {
            prev = null;
        }
        this.previous = prev;
    }

    static Interrupt onCtrlC(Runnable onInterrupt) {
        return new Interrupt(onInterrupt);
    }

    private static void restoreDefault() {
        try {
            Signal.handle(new Signal("INT"), SignalHandler.SIG_DFL);
        } catch (IllegalArgumentException ignored) {
            // no SIGINT here
        }
    }

    @Override
    public void close() {
        if (previous != null) {
            try {
                Signal.handle(new Signal("INT"), previous);
            } catch (IllegalArgumentException ignored) {
                // no SIGINT here
            }
        }
    }
}
