package io.gossgpu.server;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeoutException;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnection;
import org.eclipse.jetty.server.HttpConnectionFactory;

/**
 * HTTP/1.1 connections that answer a request whose headers stopped arriving with a JSON 408 before closing. Jetty
 * closes such a connection after the read timeout without a word (it has no request to answer yet), which a client
 * cannot tell from a crash; a connection idle between requests is still closed silently.
 */
final class HeaderTimeoutConnectionFactory extends HttpConnectionFactory {
    HeaderTimeoutConnectionFactory(HttpConfiguration config) {
        super(config);
    }

    @Override
    public Connection newConnection(Connector connector, EndPoint endPoint) {
        HttpConnection c = new HeaderTimeoutConnection(
                getHttpConfiguration(), connector, endPoint, isRecordHttpComplianceViolations());
        c.setUseInputDirectByteBuffers(isUseInputDirectByteBuffers());
        c.setUseOutputDirectByteBuffers(isUseOutputDirectByteBuffers());
        return configure(c, connector, endPoint);
    }

    private static final class HeaderTimeoutConnection extends HttpConnection {
        HeaderTimeoutConnection(
                HttpConfiguration config, Connector connector, EndPoint endPoint, boolean recordViolations) {
            super(config, connector, endPoint, recordViolations);
        }

        /** Here, before Jetty closes the parser (and so forgets how far the request came) and then the connection. */
        @Override
        protected void onFillInterestedFailed(Throwable cause) {
            // Part of a request line or headers came, the rest did not. (A request being handled is not waiting here:
            // its body reads time out inside the handler, which answers 408 itself.)
            if (cause instanceof TimeoutException
                    && getParser().inHeaderState()
                    && !getParser().isStart()) {
                try {
                    getEndPoint().flush(ByteBuffer.wrap(RESPONSE)); // small: the socket's buffer takes it at once
                } catch (IOException gone) {
                    // the client left: nothing to tell
                }
            }
            super.onFillInterestedFailed(cause);
        }
    }

    private static final byte[] RESPONSE;

    static {
        byte[] body = JettySetup.errorBody(408, null).getBytes(StandardCharsets.UTF_8);
        String head = "HTTP/1.1 408 Request Timeout\r\nContent-Type: application/json\r\nContent-Length: " + body.length
                + "\r\nConnection: close\r\n\r\n";
        byte[] h = head.getBytes(StandardCharsets.US_ASCII);
        RESPONSE = new byte[h.length + body.length];
        System.arraycopy(h, 0, RESPONSE, 0, h.length);
        System.arraycopy(body, 0, RESPONSE, h.length, body.length);
    }
}
