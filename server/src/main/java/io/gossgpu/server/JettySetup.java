package io.gossgpu.server;

import io.javalin.config.JavalinConfig;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Executors;
import java.util.function.Consumer;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.server.ConnectionLimit;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.RequestLog;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.handler.ErrorHandler;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * The Jetty under Javalin, set up for clients that misbehave: requests are handled on virtual threads (a client
 * that stalls in the middle of its body parks a virtual thread, not one of a few hundred platform threads, so
 * {@code /health} keeps answering), every read waits at most {@link ServerOptions#readTimeoutMs()} for the next
 * bytes (then 408), at most {@link ServerOptions#maxConnections()} connections are open, and the errors Jetty
 * answers itself (408, 400, 431) use OpenAI's JSON error shape.
 */
final class JettySetup {
    private JettySetup() {}

    /**
     * Binds the listening socket before Jetty starts, so that a port in use is one clear error (Javalin would log
     * its own ERROR line first).
     */
    static ServerSocketChannel bind(ServerOptions options) {
        ServerSocketChannel channel = null;
        try {
            channel = ServerSocketChannel.open();
            channel.socket().setReuseAddress(true);
            channel.bind(new InetSocketAddress(options.host(), options.port()), 128);
            return channel;
        } catch (IOException e) {
            if (channel != null) {
                try {
                    channel.close();
                } catch (IOException ignored) {
                    // nothing was bound
                }
            }
            String why = e instanceof java.net.BindException
                    ? "the address is in use or not this machine's"
                    : String.valueOf(e.getMessage());
            throw new UncheckedIOException(
                    "cannot listen on " + options.host() + ":" + options.port() + ": " + why
                            + (e.getMessage() != null && !why.equals(e.getMessage())
                                    ? " (" + e.getMessage() + ")"
                                    : ""),
                    e);
        }
    }

    /** The most Jetty's graceful stop waits for its connections to end. */
    static final long STOP_TIMEOUT_MS = 1_000;

    /** How long a connection may sit idle once the server is stopping (see {@link ServerConnector#setShutdownIdleTimeout}). */
    static final long SHUTDOWN_IDLE_MS = 200;

    /** Applies the thread pool, connector, timeouts, connection cap, error pages and request log to {@code cfg}. */
    static void configure(
            JavalinConfig cfg,
            ServerOptions options,
            ServerSocketChannel channel,
            RequestLog requestLog,
            Consumer<ServerConnector> onConnector) {
        QueuedThreadPool threads = new QueuedThreadPool(64, 4);
        threads.setName("goss-http");
        threads.setVirtualThreadsExecutor(Executors.newThreadPerTaskExecutor(
                Thread.ofVirtual().name("goss-request-", 0).factory()));
        cfg.jetty.threadPool = threads;
        cfg.jetty.modifyHttpConfiguration(http -> {
            http.setIdleTimeout(options.readTimeoutMs()); // blocking reads and writes inside a request
            http.setSendServerVersion(false);
            // The client's address, read now and kept: the access log asks for it after the reply, when a client that
            // left has closed the connection and the socket no longer knows its peer.
            http.addCustomizer(
                    (connector, config, request) -> request.setRemoteAddr(request.getRemoteInetSocketAddress()));
        });
        cfg.jetty.addConnector((server, httpConfig) -> {
            ServerConnector c = new ServerConnector(server, new HeaderTimeoutConnectionFactory(httpConfig));
            // Waiting for a request's headers and idle keep-alive connections; a request being handled is not idle
            // in Jetty's sense, so long non-streaming replies are not cut (see ErrorsTest).
            c.setIdleTimeout(options.readTimeoutMs());
            // Once stopping, a connection whose reply is written is half-closed and then closed after this long idle
            // (twice: Jetty's default of 1 s made a shutdown wait 2 s for a client that holds its socket open). A
            // reply still being written when the stop began keeps the connection's own timeout: STOP_TIMEOUT_MS ends
            // it.
            c.setShutdownIdleTimeout(SHUTDOWN_IDLE_MS);
            try {
                c.open(channel);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            onConnector.accept(c);
            return c;
        });
        cfg.jetty.modifyServer(server -> {
            server.addBean(new ConnectionLimit(options.maxConnections(), server));
            server.setErrorHandler(new JsonErrorHandler());
            server.setRequestLog(requestLog);
            // Stopping waits for responses still being written instead of dropping them. The server stops Jetty only
            // after its own drain (GossServer.drainAndStop): every generation has ended and written its last event by
            // then, so what is left is a final flush. A connection a client keeps open past that is closed.
            server.setStopTimeout(STOP_TIMEOUT_MS);
        });
    }

    /** Errors that Jetty answers before any handler runs, in OpenAI's shape. */
    private static final class JsonErrorHandler extends ErrorHandler {
        @Override
        public ByteBuffer badMessageError(int status, String reason, HttpFields.Mutable fields) {
            fields.put(HttpHeader.CONTENT_TYPE, "application/json");
            return ByteBuffer.wrap(errorBody(status, reason).getBytes(StandardCharsets.UTF_8));
        }

        @Override
        protected void generateAcceptableResponse(
                Request baseRequest, HttpServletRequest request, HttpServletResponse response, int code, String message)
                throws IOException {
            baseRequest.setHandled(true);
            response.setContentType("application/json");
            response.getOutputStream().write(errorBody(code, message).getBytes(StandardCharsets.UTF_8));
        }
    }

    /** The JSON body of an error Jetty answers before any handler runs (also {@link HeaderTimeoutConnectionFactory}'s 408). */
    static String errorBody(int status, String reason) {
        String code = status == 408 ? "request_timeout" : status == 431 ? "headers_too_large" : null;
        String message = status == 408
                ? "the request was not received in time"
                : (reason == null || reason.isBlank() ? HttpStatus.getMessage(status) : reason);
        return Json.write(Json.error(message, status >= 500 ? "server_error" : "invalid_request_error", null, code));
    }
}
