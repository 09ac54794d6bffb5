package io.gossgpu.harmony;

import java.util.Objects;

/**
 * One Harmony message: {@code <|start|>{header}<|message|>{content}<|end|>}.
 *
 * <p>The header holds the role (for tool messages the tool's name, e.g. {@code functions.get_weather}), an
 * optional recipient ({@code to=...}), an optional channel and an optional content type ({@code <|constrain|>json}
 * is written with the special token). Exactly one of {@code text}, {@code system}, {@code developer} is set.
 *
 * @param role        author role
 * @param name        the tool's name for {@link Role#TOOL}; otherwise an optional author name (rendered {@code role:name})
 * @param recipient   e.g. {@code functions.get_weather} for a tool call, {@code assistant} for a tool result; or null
 * @param channel     analysis / commentary / final, or null
 * @param contentType e.g. {@code <|constrain|>json} or {@code json}; or null
 */
public record Message(
        Role role,
        String name,
        String recipient,
        String channel,
        String contentType,
        String text,
        SystemContent system,
        DeveloperContent developer) {

    public Message {
        Objects.requireNonNull(role, "role");
        int set = (text != null ? 1 : 0) + (system != null ? 1 : 0) + (developer != null ? 1 : 0);
        if (set != 1)
            throw new IllegalArgumentException("a message has exactly one of text, system content, developer content");
        if (system != null && role != Role.SYSTEM)
            throw new IllegalArgumentException("system content in a " + role.wire() + " message");
        if (developer != null && role != Role.DEVELOPER)
            throw new IllegalArgumentException("developer content in a " + role.wire() + " message");
        if (role == Role.TOOL && (name == null || name.isEmpty()))
            throw new IllegalArgumentException("a tool message needs the tool's name");
    }

    public static Message system(SystemContent c) {
        return new Message(Role.SYSTEM, null, null, null, null, null, c, null);
    }

    public static Message developer(DeveloperContent c) {
        return new Message(Role.DEVELOPER, null, null, null, null, null, null, c);
    }

    public static Message user(String text) {
        return new Message(Role.USER, null, null, null, null, text, null, null);
    }

    /** An assistant message on a channel (analysis, commentary or final). */
    public static Message assistant(String channel, String text) {
        return new Message(Role.ASSISTANT, null, null, channel, null, text, null, null);
    }

    /** An assistant call of function tool {@code function} with JSON arguments, on the commentary channel. */
    public static Message toolCall(String function, String argumentsJson) {
        return new Message(
                Role.ASSISTANT,
                null,
                "functions." + function,
                "commentary",
                "<|constrain|>json",
                argumentsJson,
                null,
                null);
    }

    /** The result of function tool {@code function}, sent back to the assistant on the commentary channel. */
    public static Message toolResult(String function, String output) {
        return new Message(Role.TOOL, "functions." + function, "assistant", "commentary", null, output, null, null);
    }

    public Message withChannel(String c) {
        return new Message(role, name, recipient, c, contentType, text, system, developer);
    }

    public Message withRecipient(String r) {
        return new Message(role, name, r, channel, contentType, text, system, developer);
    }

    public Message withContentType(String t) {
        return new Message(role, name, recipient, channel, t, text, system, developer);
    }
}
