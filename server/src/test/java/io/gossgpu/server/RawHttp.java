package io.gossgpu.server;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/** HTTP/1.1 by hand, for what java.net.http will not send (a forged Host, a stalled body) or read (a cut stream). */
final class RawHttp {
    private RawHttp() {}

    /** A request with {@code Connection: close}; {@code headers} are full lines without the line ends. */
    static String request(String method, String path, String host, String body, String... headers) {
        StringBuilder sb =
                new StringBuilder(method + " " + path + " HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\n");
        for (String h : headers) sb.append(h).append("\r\n");
        if (body != null)
            sb.append("Content-Length: ")
                    .append(body.getBytes(StandardCharsets.UTF_8).length)
                    .append("\r\n");
        sb.append("\r\n");
        if (body != null) sb.append(body);
        return sb.toString();
    }

    /** Sends {@code request} and reads the whole response (status line, headers, body) until the server closes. */
    static String exchange(int port, String request, int timeoutMs) {
        try (Socket s = new Socket("127.0.0.1", port)) {
            s.setSoTimeout(timeoutMs);
            s.getOutputStream().write(request.getBytes(StandardCharsets.UTF_8));
            s.getOutputStream().flush();
            return new String(s.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static int status(String response) {
        return Integer.parseInt(response.substring(9, 12));
    }

    static String body(String response) {
        int i = response.indexOf("\r\n\r\n");
        return i < 0 ? "" : response.substring(i + 4);
    }
}
