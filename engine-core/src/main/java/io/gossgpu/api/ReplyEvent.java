package io.gossgpu.api;

/**
 * What {@link Chat#stream} publishes while a reply is generated: text and reasoning as they come, each tool call
 * once its arguments are complete, and last the whole {@link Reply} (then the publisher completes).
 */
public sealed interface ReplyEvent {
    /** More of the answer's text ({@link ChatListener#onContent}). */
    record Content(String delta) implements ReplyEvent {}

    /** More of the reasoning ({@link ChatListener#onReasoning}). */
    record Reasoning(String delta) implements ReplyEvent {}

    /** A complete tool call ({@link ChatListener#onToolCall}). */
    record ToolCall(Reply.ToolCall call) implements ReplyEvent {}

    /** The finished reply: the last event. */
    record Done(Reply reply) implements ReplyEvent {}
}
