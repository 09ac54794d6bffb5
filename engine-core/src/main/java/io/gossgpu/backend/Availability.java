package io.gossgpu.backend;

/** Whether a backend can run here; when not, {@code reason} is one line a user can act on. */
public record Availability(boolean available, String reason) {
    public static Availability yes(String detail) {
        return new Availability(true, detail);
    }

    public static Availability no(String reason) {
        return new Availability(false, reason);
    }
}
