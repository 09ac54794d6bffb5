package io.gossgpu.server;

import io.gossgpu.api.Chat;
import io.gossgpu.api.ChatListener;
import io.gossgpu.api.Completion;
import io.gossgpu.api.Reply;
import io.gossgpu.generate.GenerationResult.StopReason;
import io.gossgpu.generate.SamplerConfig;
import io.gossgpu.harmony.Message;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * Runs one request on a slot and reports what the model writes to a {@link Sink} as it comes: reasoning, content
 * (with stop sequences cut off), and tool calls with their arguments streamed. When the sink fails to write (the
 * client went away) the generation is cancelled.
 */
final class Generation {
    /** Where the output goes as it is generated; an IOException means the client is gone. */
    interface Sink {
        default void reasoning(String delta) throws IOException {}
        default void content(String delta) throws IOException {}
        default void toolStart(ToolCallOut call) throws IOException {}
        default void toolDelta(ToolCallOut call, String delta) throws IOException {}
        /** Called on every generated token: a chance to check the client is still there. */
        default void tick() throws IOException {}
    }

    /** A tool call being generated: {@code index} among this reply's calls, an id for the client, the arguments so far. */
    static final class ToolCallOut {
        final int index;
        final String id;
        final String name;
        final StringBuilder arguments = new StringBuilder();
        boolean done;

        ToolCallOut(int index, String name) {
            this.index = index;
            this.id = Requests.id("call_");
            this.name = name;
        }
    }

    /** What came out. {@code finishReason}: stop, length or tool_calls. */
    record Outcome(String content, String reasoning, List<ToolCallOut> toolCalls, String finishReason,
                   int promptTokens, int completionTokens, int cachedTokens, int reasoningTokens, boolean clientGone) {}

    private Generation() {}

    static Outcome chat(SlotPool.Slot slot, List<Message> messages, int promptTokens, int maxTokens, SamplerConfig sampler,
                        List<String> stops, Sink sink) {
        Chat chat = slot.chat();
        Listener l = new Listener(stops, sink, chat::cancel, slot);
        Reply r = chat.reply(messages, maxTokens, sampler, l);
        l.finish();
        int cached = Math.max(0, promptTokens - chat.lastPrefillTokens());
        return l.outcome(r, promptTokens, cached);
    }

    static Outcome complete(SlotPool.Slot slot, String prompt, int promptTokens, int maxTokens, SamplerConfig sampler,
                            List<String> stops, Sink sink) {
        Completion c = slot.completion();
        Listener l = new Listener(stops, sink, c::cancel, slot);
        Reply r = c.complete(prompt, maxTokens, sampler, l);
        l.finish();
        return l.outcome(r, promptTokens, 0);
    }

    private static final class Listener implements ChatListener {
        final StopMatcher stop;
        final Sink sink;
        final Runnable cancel;
        final SlotPool.Slot slot;
        final StringBuilder content = new StringBuilder(), reasoning = new StringBuilder();
        final List<ToolCallOut> calls = new ArrayList<>();
        int reasoningTokens;
        boolean inReasoning;
        boolean gone;

        Listener(List<String> stops, Sink sink, Runnable cancel, SlotPool.Slot slot) {
            this.slot = slot;
            this.stop = new StopMatcher(stops);
            this.sink = sink;
            this.cancel = cancel;
        }

        private void send(IoAction a) {
            if (gone) return;
            try {
                a.run();
            } catch (IOException e) {
                gone = true;
                cancel.run();
            }
        }

        @Override
        public void onToken(int token) {
            if (inReasoning) reasoningTokens++;
            if (slot.stopping) cancel.run(); // a cancel that came before the generation began is not lost
            send(sink::tick);
        }

        @Override
        public void onReasoning(String delta) {
            inReasoning = true;
            reasoning.append(delta);
            send(() -> sink.reasoning(delta));
        }

        @Override
        public void onContent(String delta) {
            inReasoning = false;
            if (stop.stopped()) return;
            String out = stop.accept(delta);
            if (stop.stopped()) cancel.run();
            emit(out);
        }

        private void emit(String out) {
            if (out.isEmpty()) return;
            content.append(out);
            send(() -> sink.content(out));
        }

        @Override
        public void onToolCallStart(String functionName) {
            inReasoning = false;
            if (stop.stopped()) return;
            ToolCallOut c = new ToolCallOut(calls.size(), functionName);
            calls.add(c);
            send(() -> sink.toolStart(c));
        }

        @Override
        public void onToolCallDelta(String functionName, String delta) {
            if (stop.stopped() || calls.isEmpty()) return;
            ToolCallOut c = calls.getLast();
            c.arguments.append(delta);
            send(() -> sink.toolDelta(c, delta));
        }

        @Override
        public void onToolCall(String functionName, String arguments) {
            if (stop.stopped()) return;
            ToolCallOut c = calls.isEmpty() ? null : calls.getLast();
            if (c != null && !c.done && c.name.equals(functionName)) {
                c.done = true;
                if (!c.arguments.toString().equals(arguments)) { c.arguments.setLength(0); c.arguments.append(arguments); }
                return;
            }
            // a call whose start was not seen: report it whole
            ToolCallOut n = new ToolCallOut(calls.size(), functionName);
            n.arguments.append(arguments);
            n.done = true;
            calls.add(n);
            send(() -> { sink.toolStart(n); sink.toolDelta(n, arguments); });
        }

        void finish() {
            emit(stop.flush());
        }

        Outcome outcome(Reply r, int promptTokens, int cached) {
            String finish;
            if (stop.stopped()) finish = "stop";
            else if (!calls.isEmpty()) finish = "tool_calls";
            else if (r.stopReason() == StopReason.MAX_TOKENS || r.stopReason() == StopReason.CONTEXT_FULL) finish = "length";
            else finish = "stop";
            return new Outcome(content.toString(), reasoning.toString(), List.copyOf(calls), finish, promptTokens,
                    r.tokens().length, cached, reasoningTokens, gone);
        }
    }

    @FunctionalInterface
    private interface IoAction {
        void run() throws IOException;
    }
}
