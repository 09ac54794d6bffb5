package io.gossgpu.harmony;

import java.util.Optional;

/**
 * A message parsed from model output.
 *
 * @param role        the author role (TOOL when the header names a tool)
 * @param author      the name in the header: the role's name, or the tool's name for TOOL
 * @param channel     analysis / commentary / final, or null when the header had none
 * @param recipient   the {@code to=} target (e.g. {@code functions.get_weather}), or null
 * @param contentType e.g. {@code <|constrain|>json}, or null
 * @param content     the decoded content text
 * @param endToken    the token that ended the message ({@code <|end|>}, {@code <|return|>}, {@code <|call|>}),
 *                    or -1 when it was cut off (end of stream, or a malformed sequence)
 * @param error       what was wrong with the message when the model's output was malformed, else null
 */
public record ParsedMessage(
        Role role,
        String author,
        String channel,
        String recipient,
        String contentType,
        String content,
        int endToken,
        String error) {

    /** An assistant message with a recipient: a tool call whose arguments are the content. */
    public boolean isToolCall() {
        return role == Role.ASSISTANT && recipient != null && !recipient.equals("all");
    }

    /** For a call of a function tool ({@code to=functions.NAME}), NAME. */
    public Optional<String> functionName() {
        return isToolCall() && recipient.startsWith("functions.")
                ? Optional.of(recipient.substring("functions.".length()))
                : Optional.empty();
    }

    /** As a {@link Message} (for putting the model's output back into the conversation). */
    public Message toMessage() {
        return new Message(
                role, role == Role.TOOL ? author : null, recipient, channel, contentType, content, null, null);
    }

    ParsedMessage withContent(String c, int end, String err) {
        return new ParsedMessage(role, author, channel, recipient, contentType, c, end, err);
    }
}
