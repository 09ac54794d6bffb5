package io.gossgpu.server;

/** An error answered in OpenAI's shape: {@code {"error":{"message","type","param","code"}}} with an HTTP status. */
final class ApiError extends RuntimeException {
    final int status;
    final String type;
    final String param;
    final String code;
    final String retryAfter;

    ApiError(int status, String type, String code, String param, String message, String retryAfter) {
        super(message);
        this.status = status;
        this.type = type;
        this.code = code;
        this.param = param;
        this.retryAfter = retryAfter;
    }

    static ApiError badRequest(String param, String message) {
        return new ApiError(400, "invalid_request_error", null, param, message, null);
    }

    static ApiError badRequest(String param, String code, String message) {
        return new ApiError(400, "invalid_request_error", code, param, message, null);
    }

    /** A request that arrives while the server shuts down. */
    static ApiError shuttingDown() {
        return new ApiError(
                503,
                "server_error",
                "shutting_down",
                null,
                "the server is shutting down; retry on another instance",
                "1");
    }

    /** A reply the server's shutdown ended before it was complete. */
    static ApiError cutByShutdown() {
        return new ApiError(
                503,
                "server_error",
                "shutting_down",
                null,
                "the server shut down before the reply was complete; retry on another instance",
                "1");
    }
}
