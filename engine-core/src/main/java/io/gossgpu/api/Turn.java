package io.gossgpu.api;

import java.util.Objects;

/**
 * One turn of a {@link Conversation} after its instructions: what the user said, what the assistant answered or
 * reasoned, the tool calls it made and their results. Replies add their turns as the same types
 * ({@link Reply#content()}, {@link Reply#reasoning()}, {@link Reply#toolCalls()}).
 */
public sealed interface Turn {
    /** A user message. */
    record User(String text) implements Turn {
        public User {
            Objects.requireNonNull(text, "text");
        }
    }

    /** An answer of the assistant (the text the user saw). */
    record Assistant(String text) implements Turn {
        public Assistant {
            Objects.requireNonNull(text, "text");
        }
    }

    /**
     * Assistant text said beside its tool calls rather than as the answer (Harmony's commentary channel, e.g. a
     * preamble announcing the calls).
     */
    record Commentary(String text) implements Turn {
        public Commentary {
            Objects.requireNonNull(text, "text");
        }
    }

    /** The assistant's reasoning before an answer or a tool call (Harmony keeps it only before tool calls). */
    record Reasoning(String text) implements Turn {
        public Reasoning {
            Objects.requireNonNull(text, "text");
        }
    }

    /** A call of function tool {@code functionName} with the arguments the model wrote (JSON). */
    record ToolCall(String functionName, String arguments) implements Turn {
        public ToolCall {
            Objects.requireNonNull(functionName, "functionName");
            if (arguments == null) arguments = "{}";
        }

        public static ToolCall of(Reply.ToolCall c) {
            return new ToolCall(c.functionName(), c.arguments());
        }
    }

    /** What function tool {@code functionName} returned for the call before it. */
    record ToolResult(String functionName, String output) implements Turn {
        public ToolResult {
            Objects.requireNonNull(functionName, "functionName");
            Objects.requireNonNull(output, "output");
        }
    }
}
