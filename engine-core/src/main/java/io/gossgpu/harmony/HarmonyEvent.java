package io.gossgpu.harmony;

/** What {@link HarmonyStreamParser} reports as tokens arrive. */
public sealed interface HarmonyEvent {

    /** A message header is complete; {@code header.content()} is empty. */
    record MessageStart(ParsedMessage header) implements HarmonyEvent {}

    /** More content text of the current message (whole characters only). */
    record ContentDelta(String text) implements HarmonyEvent {}

    /** A message is complete. */
    record MessageEnd(ParsedMessage message) implements HarmonyEvent {}

    /** The assistant called a tool ({@code to=functions.NAME}, usually ended by {@code <|call|>}); run it and reply. */
    record ToolCall(String recipient, String functionName, String arguments, String contentType)
            implements HarmonyEvent {}

    /** The assistant's turn is over: {@code stopToken} is {@code <|return|>} or {@code <|call|>}. Stop generating. */
    record TurnEnd(int stopToken) implements HarmonyEvent {}

    /** The output broke the format here; parsing goes on. */
    record Malformed(String reason) implements HarmonyEvent {}
}
