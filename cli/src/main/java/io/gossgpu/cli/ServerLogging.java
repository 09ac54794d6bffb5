package io.gossgpu.cli;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.OutputStreamAppender;
import ch.qos.logback.core.encoder.Encoder;
import java.io.OutputStream;
import java.util.Locale;
import org.slf4j.LoggerFactory;

/**
 * The server's log output, set once by {@code goss-gpu serve}: {@link Format#TEXT} lines for people, or
 * {@link Format#JSON}, one object per line for log collectors. Access lines ({@code goss.access}), the server's own
 * events ({@code goss.server}) and the libraries' messages all go the same way. The server module logs through the
 * SLF4J API only; Logback, and this set-up of it, belong to the command line (an application embedding the server
 * brings its own logging).
 */
final class ServerLogging {
    enum Format {
        TEXT,
        JSON;

        /** {@code text} or {@code json}. */
        static Format parse(String s) {
            try {
                return valueOf(s.trim().toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("--log-format must be text or json, got '" + s + "'");
            }
        }
    }

    private ServerLogging() {}

    /** Sends every log event at INFO and above (Jetty's and Javalin's at WARN and above) to {@code out} in {@code format}. */
    static void configure(Format format, OutputStream out) {
        if (!(LoggerFactory.getILoggerFactory() instanceof LoggerContext ctx))
            return; // an embedding application's own logging
        ctx.reset();
        Encoder<ILoggingEvent> encoder;
        if (format == Format.JSON) {
            encoder = new JsonLogEncoder();
        } else {
            PatternLayoutEncoder p = new PatternLayoutEncoder();
            p.setPattern("%d{yyyy-MM-dd'T'HH:mm:ss.SSSXXX} %-5level %logger{0}: %msg %kvp{NONE}%n");
            encoder = p;
        }
        encoder.setContext(ctx);
        encoder.start();
        OutputStreamAppender<ILoggingEvent> appender = new OutputStreamAppender<>();
        appender.setContext(ctx);
        appender.setName(format.name().toLowerCase(Locale.ROOT));
        appender.setEncoder(encoder);
        appender.setOutputStream(out);
        appender.setImmediateFlush(true);
        appender.start();
        ch.qos.logback.classic.Logger root = ctx.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        root.setLevel(Level.INFO);
        root.addAppender(appender);
        ctx.getLogger("org.eclipse.jetty").setLevel(Level.WARN);
        ctx.getLogger("io.javalin").setLevel(Level.WARN);
    }
}
