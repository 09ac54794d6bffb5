package io.gossgpu.server;

import io.gossgpu.Timings;
import io.gossgpu.api.Chat;
import io.gossgpu.api.ChatListener;
import io.gossgpu.api.ChatOptions;
import io.gossgpu.api.Completion;
import io.gossgpu.api.Conversation;
import io.gossgpu.api.Reply;
import io.gossgpu.api.ResponseFormat;
import io.gossgpu.api.Sampling;
import io.gossgpu.api.StopReason;
import io.gossgpu.api.StopSequences;
import io.gossgpu.api.TokenLogprob;
import io.gossgpu.api.Tokens;
import io.gossgpu.api.Tool;
import io.gossgpu.api.ToolChoice;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Runs one request on a slot and reports what the model writes to a {@link Sink} as it comes: reasoning, content
 * (with stop sequences cut off), and tool calls with their arguments streamed. When the sink fails to write (the
 * client went away) the generation is cancelled. A generation ended by the server's shutdown is reported as
 * {@link Outcome#aborted()}, never as a finished reply.
 */
final class Generation {
    /** Where the output goes as it is generated; an IOException means the client is gone. */
    interface Sink {
        default void reasoning(String delta) throws IOException {}
        /** {@code logprobs}: the tokens of this text, when the request asked for them (else empty). */
        default void content(String delta, List<TokenLogprob> logprobs) throws IOException {}

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

    /**
     * What came out. {@code finishReason}: stop, length or tool_calls. {@code clientGone}: the client left and the
     * generation was cancelled; {@code aborted}: the server's shutdown ended it before it was complete.
     * {@code logprobs}: the content tokens' log probabilities when asked for.
     */
    record Outcome(
            String content,
            String reasoning,
            List<ToolCallOut> toolCalls,
            String finishReason,
            int promptTokens,
            int completionTokens,
            int cachedTokens,
            int reasoningTokens,
            boolean clientGone,
            boolean aborted,
            Timings timings,
            List<TokenLogprob> logprobs) {
        /** Nothing generated (a request for zero tokens). */
        static Outcome empty(int promptTokens) {
            return new Outcome("", "", List.of(), "length", promptTokens, 0, 0, 0, false, false, null, List.of());
        }
    }

    /**
     * What a request asks of the generation besides the prompt. {@code sampling}: with the logit bias and penalties;
     * {@code format}: the answer's structured-output format (null: free text); {@code tools}: the names of the function
     * tools the request declared (strict ones hold their arguments themselves, {@link Tool#strict()});
     * {@code choice}: whether the reply must call one of them (null: the model decides).
     */
    record Limits(
            int maxTokens,
            Sampling sampling,
            List<String> stops,
            int topLogprobs,
            ResponseFormat format,
            Set<String> tools,
            ToolChoice choice) {
        Limits(int maxTokens, Sampling sampling, List<String> stops, int topLogprobs) {
            this(maxTokens, sampling, stops, topLogprobs, null, Set.of(), null);
        }

        Limits structured(ResponseFormat format) {
            return new Limits(maxTokens, sampling, stops, topLogprobs, format, tools, choice);
        }

        /**
         * The function tools the request declared (after tool_choice): a call to any other is not a tool call; and
         * whether the reply must call one.
         */
        Limits declaring(List<Tool> declared, ToolChoice choice) {
            Set<String> names = new HashSet<>();
            for (Tool t : declared) names.add(t.name());
            return new Limits(maxTokens, sampling, stops, topLogprobs, format, Set.copyOf(names), choice);
        }

        /** {@code base} (the reply's reasoning effort and date) with this request's limit, sampling, format, choice. */
        ChatOptions reply(ChatOptions base) {
            return base.withMaxTokens(maxTokens)
                    .withSampling(sampling)
                    .withResponseFormat(format)
                    .withToolChoice(choice);
        }
    }

    private Generation() {}

    /** The reply to {@code conversation} with {@code reply}'s effort and date (its prompt has {@code promptTokens}). */
    static Outcome chat(
            SlotPool.Slot slot,
            Conversation conversation,
            ChatOptions reply,
            int promptTokens,
            Limits limits,
            Sink sink) {
        return slot.run(() -> runChat(slot, conversation, limits.reply(reply), promptTokens, limits, sink));
    }

    static Outcome complete(SlotPool.Slot slot, String prompt, int promptTokens, Limits limits, Sink sink) {
        return slot.run(() -> runCompletion(slot, prompt, promptTokens, limits, sink));
    }

    private static Outcome runChat(
            SlotPool.Slot slot,
            Conversation conversation,
            ChatOptions reply,
            int promptTokens,
            Limits limits,
            Sink sink) {
        Chat chat = slot.chat();
        Listener l = new Listener(limits, sink, chat::cancel, slot);
        Reply r = chat.send(conversation, reply, l);
        l.finish();
        int cached = Math.max(0, promptTokens - chat.lastPrefillTokens());
        slot.cachedTokens = promptTokens + Math.max(0, r.tokens().length - 1);
        return l.outcome(r, promptTokens, cached);
    }

    private static Outcome runCompletion(
            SlotPool.Slot slot, String prompt, int promptTokens, Limits limits, Sink sink) {
        Completion c = slot.completion();
        Listener l = new Listener(limits, sink, c::cancel, slot);
        Reply r = c.complete(prompt, limits.reply(ChatOptions.defaults()), l);
        l.finish();
        return l.outcome(r, promptTokens, 0);
    }

    private static final class Listener implements ChatListener {
        final StopSequences stop;
        final Sink sink;
        final Runnable cancel;
        final SlotPool.Slot slot;
        final StringBuilder content = new StringBuilder(), reasoning = new StringBuilder();
        final List<ToolCallOut> calls = new ArrayList<>();
        final int topLogprobs;
        /** Content tokens' log probabilities: all of them, and those whose text is not sent yet. */
        final List<TokenLogprob> logprobs = new ArrayList<>(), unsent = new ArrayList<>();
        /** The current token's log probabilities, until its text (if any) is known. */
        TokenLogprob current;

        int reasoningTokens;
        boolean inReasoning;
        boolean gone;

        /** The function tools the request declared; a call to another is passed on as content (see {@link #onToolCallStart}). */
        final Set<String> declared;
        /** Whether the call being written is to a function the request did not declare. */
        boolean undeclared;

        Listener(Limits limits, Sink sink, Runnable cancel, SlotPool.Slot slot) {
            this.declared = limits.tools();
            this.slot = slot;
            this.stop = new StopSequences(limits.stops());
            this.sink = sink;
            this.cancel = cancel;
            this.topLogprobs = limits.topLogprobs();
        }

        @Override
        public int topLogprobs() {
            return topLogprobs;
        }

        @Override
        public void onLogprobs(TokenLogprob lp) {
            // A token whose bytes end mid-character shows its text only with the next one: keep it for that text.
            // A special token (a Harmony header's) ends that: what came before it was header text, not content.
            if (current != null && Tokens.isSpecial(current.token())) unsent.clear();
            else if (current != null) unsent.add(current);
            current = lp;
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

        /** The current token's text went somewhere other than the content: its log probabilities are not content's. */
        private void notContent() {
            current = null;
            unsent.clear();
        }

        @Override
        public void onReasoning(String delta) {
            inReasoning = true;
            notContent();
            reasoning.append(delta);
            send(() -> sink.reasoning(delta));
        }

        @Override
        public void onContent(String delta) {
            inReasoning = false;
            if (stop.stopped()) return;
            if (current != null) {
                unsent.add(current);
                current = null;
            }
            String out = stop.accept(delta);
            if (stop.stopped()) cancel.run();
            emit(out);
        }

        private void emit(String out) {
            if (out.isEmpty()) return;
            content.append(out);
            List<TokenLogprob> lps = List.copyOf(unsent);
            logprobs.addAll(lps);
            unsent.clear();
            send(() -> sink.content(out, lps));
        }

        /**
         * A call to a function the request did not declare (gpt-oss knows tool formats and sometimes calls one unasked)
         * is not a tool call: OpenAI clients that sent no such tool would try to run it and fail, and a request
         * without tools must end with content and finish_reason stop. Its text goes out as content instead; masking
         * the call away would force host-side sampling on every step of every request without tools.
         */
        @Override
        public void onToolCallStart(String functionName) {
            inReasoning = false;
            undeclared = !declared.contains(functionName);
            if (undeclared) return;
            notContent();
            if (stop.stopped()) return;
            ToolCallOut c = new ToolCallOut(calls.size(), functionName);
            calls.add(c);
            send(() -> sink.toolStart(c));
        }

        @Override
        public void onToolCallDelta(String functionName, String delta) {
            if (undeclared) {
                onContent(delta);
                return;
            }
            notContent();
            if (stop.stopped() || calls.isEmpty()) return;
            ToolCallOut c = calls.getLast();
            c.arguments.append(delta);
            send(() -> sink.toolDelta(c, delta));
        }

        @Override
        public void onToolCall(String functionName, String arguments) {
            if (!declared.contains(functionName)) {
                boolean streamed = undeclared;
                undeclared = false;
                if (!streamed) onContent(arguments); // a call whose start was not seen: its text whole
                return;
            }
            if (stop.stopped()) return;
            ToolCallOut c = calls.isEmpty() ? null : calls.getLast();
            if (c != null && !c.done && c.name.equals(functionName)) {
                c.done = true;
                if (!c.arguments.toString().equals(arguments)) {
                    c.arguments.setLength(0);
                    c.arguments.append(arguments);
                }
                return;
            }
            // a call whose start was not seen: report it whole
            ToolCallOut n = new ToolCallOut(calls.size(), functionName);
            n.arguments.append(arguments);
            n.done = true;
            calls.add(n);
            send(() -> {
                sink.toolStart(n);
                sink.toolDelta(n, arguments);
            });
        }

        void finish() {
            emit(stop.flush());
        }

        Outcome outcome(Reply r, int promptTokens, int cached) {
            String finish;
            if (stop.stopped()) finish = "stop";
            else if (!calls.isEmpty()) finish = "tool_calls";
            else if (r.stopReason() == StopReason.MAX_TOKENS || r.stopReason() == StopReason.CONTEXT_FULL)
                finish = "length";
            else finish = "stop";
            // Cancelled by the shutdown (not by a stop sequence or a client that left): the reply is cut, not finished.
            boolean cut = slot.stopping && r.stopReason() == StopReason.CANCELLED && !stop.stopped() && !gone;
            return new Outcome(
                    content.toString(),
                    reasoning.toString(),
                    List.copyOf(calls),
                    finish,
                    promptTokens,
                    r.tokens().length,
                    cached,
                    reasoningTokens,
                    gone,
                    cut,
                    r.timings(),
                    List.copyOf(logprobs));
        }
    }

    @FunctionalInterface
    private interface IoAction {
        void run() throws IOException;
    }
}
