package io.gossgpu.server;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.LoggerFactory;
import org.slf4j.event.KeyValuePair;

/**
 * The SLF4J events the server logged while a piece of test code ran (INFO and above, Jetty's and Javalin's
 * excluded): what it says, not how a log format prints it (the command line's ServerLogging owns that, and its
 * tests check it). Logback is only the server's test-scope dependency.
 */
final class LoggedEvents {
    /** One event: its level ({@code INFO}, ...), logger name, formatted message, key-values, and its exception's {@code Class: message} (or null). */
    record Event(String level, String logger, String message, Map<String, Object> kv, String error) {
        Object get(String key) {
            return kv.get(key);
        }
    }

    interface ThrowingRunnable {
        void run() throws Exception;
    }

    private LoggedEvents() {}

    static List<Event> of(ThrowingRunnable body) throws Exception {
        LoggerContext ctx = (LoggerContext) LoggerFactory.getILoggerFactory();
        Logger root = ctx.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        Level level0 = root.getLevel();
        ListAppender<ILoggingEvent> list = new ListAppender<>();
        list.setContext(ctx);
        list.start();
        root.addAppender(list);
        root.setLevel(Level.INFO);
        try {
            body.run();
        } finally {
            root.detachAppender(list);
            root.setLevel(level0);
        }
        return list.list.stream()
                .filter(e -> !e.getLoggerName().startsWith("org.eclipse.jetty")
                        && !e.getLoggerName().startsWith("io.javalin"))
                .map(LoggedEvents::event)
                .toList();
    }

    private static Event event(ILoggingEvent e) {
        Map<String, Object> kv = new LinkedHashMap<>();
        if (e.getKeyValuePairs() != null) for (KeyValuePair p : e.getKeyValuePairs()) kv.put(p.key, p.value);
        var t = e.getThrowableProxy();
        return new Event(
                e.getLevel().toString(),
                e.getLoggerName(),
                e.getFormattedMessage(),
                kv,
                t == null ? null : t.getClassName() + (t.getMessage() != null ? ": " + t.getMessage() : ""));
    }
}
