package io.gossgpu.harmony;

import java.util.Optional;

/** Author roles of Harmony messages, highest authority first. */
public enum Role {
    SYSTEM("system"),
    DEVELOPER("developer"),
    USER("user"),
    ASSISTANT("assistant"),
    TOOL("tool");

    private final String wire;

    Role(String wire) {
        this.wire = wire;
    }

    /** The name written in a message header. */
    public String wire() {
        return wire;
    }

    /** The role written as {@code name} in a header; empty for anything else (a tool's name, for instance). */
    public static Optional<Role> fromWire(String name) {
        for (Role r : values()) if (r.wire.equals(name)) return Optional.of(r);
        return Optional.empty();
    }
}
