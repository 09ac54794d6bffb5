package io.gossgpu.cli;

import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where the command line shows the library's own messages, which the library logs on {@link System.Logger}s named
 * {@code io.gossgpu.*} (the JDK sends those to java.util.logging): as {@code goss-gpu: warning: ...} and
 * {@code goss-gpu: ...} lines on the stderr in effect when each is logged, or, once {@code serve} has set up its log,
 * as SLF4J events in the server's format (text or JSON, one per line).
 */
final class LibraryMessages {
    /** Held so the JDK does not collect the configured logger (java.util.logging keeps loggers weakly). */
    private static final Logger ROOT = Logger.getLogger("io.gossgpu");

    private LibraryMessages() {}

    /** {@code goss-gpu: ...} lines on {@code System.err}; INFO and above. */
    static synchronized void toStderr() {
        install(new Handler() {
            @Override
            public void publish(LogRecord r) {
                if (!isLoggable(r)) return;
                System.err.println("goss-gpu: "
                        + (r.getLevel().intValue() >= Level.WARNING.intValue() ? "warning: " : "") + r.getMessage());
            }

            @Override
            public void flush() {}

            @Override
            public void close() {}
        });
    }

    /** Each message as an SLF4J event on a logger of the same name (the server's log). */
    static synchronized void toSlf4j() {
        install(new Handler() {
            @Override
            public void publish(LogRecord r) {
                if (!isLoggable(r)) return;
                org.slf4j.Logger log = LoggerFactory.getLogger(r.getLoggerName());
                if (r.getLevel().intValue() >= Level.WARNING.intValue()) log.warn(r.getMessage());
                else log.info(r.getMessage());
            }

            @Override
            public void flush() {}

            @Override
            public void close() {}
        });
    }

    private static void install(Handler h) {
        for (Handler old : ROOT.getHandlers()) ROOT.removeHandler(old);
        h.setLevel(Level.INFO);
        ROOT.setLevel(Level.INFO);
        ROOT.setUseParentHandlers(false);
        ROOT.addHandler(h);
    }
}
