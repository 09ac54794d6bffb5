package io.gossgpu.api;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Flow;
import java.util.concurrent.SubmissionPublisher;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;

/**
 * {@link Chat#sendAsync} and {@link Chat#stream}: the synchronous reply ({@code call}, one of Chat's send methods)
 * run on a thread of its own, its listener's callbacks forwarded, its end completing a future or a publisher.
 * Cancelling the future, or the subscriber cancelling its subscription, stops the reply ({@link Chat#cancel}).
 */
final class AsyncReplies {
    private AsyncReplies() {}

    /** A future that also stops the reply when cancelled. */
    static final class ReplyFuture extends CompletableFuture<Reply> {
        private final Chat chat;
        /** The reply as generated, also when this future was cancelled (tests see that it stopped early). */
        final CompletableFuture<Reply> generated = new CompletableFuture<>();

        ReplyFuture(Chat chat) {
            this.chat = chat;
        }

        @Override
        public boolean cancel(boolean mayInterruptIfRunning) {
            boolean done = super.cancel(mayInterruptIfRunning);
            chat.cancel();
            return done;
        }
    }

    static ReplyFuture future(Chat chat, Function<ChatListener, Reply> call, ChatListener listener) {
        ChatListener l = listener != null ? listener : new ChatListener() {};
        ReplyFuture f = new ReplyFuture(chat);
        // Chat.cancel only reaches a reply that has begun: a cancel that came first is seen at the first token.
        ChatListener watched = new Forwarding(l) {
            @Override
            public void onToken(int token) {
                if (f.isCancelled()) chat.cancel();
                super.onToken(token);
            }
        };
        Thread.ofPlatform().daemon().name("goss-gpu-reply").start(() -> {
            if (f.isCancelled()) {
                f.generated.cancel(false);
                return;
            }
            try {
                Reply r = call.apply(watched);
                f.generated.complete(r);
                f.complete(r);
            } catch (Throwable t) {
                f.generated.completeExceptionally(t);
                f.completeExceptionally(t);
            }
        });
        return f;
    }

    /**
     * A cold publisher: the reply starts when it is subscribed (once; a second subscriber gets an error). A slow
     * subscriber slows the reply down (the generating thread waits for buffer space) rather than losing events.
     */
    static Flow.Publisher<ReplyEvent> publisher(Chat chat, Function<ChatListener, Reply> call) {
        AtomicBoolean subscribed = new AtomicBoolean();
        return subscriber -> {
            if (!subscribed.compareAndSet(false, true)) {
                SubmissionPublisher<ReplyEvent> refused = new SubmissionPublisher<>();
                refused.subscribe(subscriber);
                refused.closeExceptionally(new IllegalStateException("a reply's publisher takes one subscriber"));
                return;
            }
            SubmissionPublisher<ReplyEvent> out = new SubmissionPublisher<>();
            out.subscribe(subscriber);
            ChatListener events = new ChatListener() {
                private void emit(ReplyEvent e) {
                    out.submit(e);
                    if (!out.hasSubscribers()) chat.cancel(); // the subscriber cancelled: nobody reads the rest
                }

                @Override
                public void onToken(int token) {
                    if (!out.hasSubscribers()) chat.cancel();
                }

                @Override
                public void onContent(String delta) {
                    emit(new ReplyEvent.Content(delta));
                }

                @Override
                public void onReasoning(String delta) {
                    emit(new ReplyEvent.Reasoning(delta));
                }

                @Override
                public void onToolCall(String fn, String args) {
                    emit(new ReplyEvent.ToolCall(new Reply.ToolCall(fn, args)));
                }
            };
            future(chat, call, events).whenComplete((reply, error) -> {
                if (error != null) out.closeExceptionally(error);
                else {
                    out.submit(new ReplyEvent.Done(reply));
                    out.close();
                }
            });
        };
    }

    /** Passes every callback on to {@code to}. */
    private static class Forwarding implements ChatListener {
        private final ChatListener to;

        Forwarding(ChatListener to) {
            this.to = to;
        }

        @Override
        public void onToken(int token) {
            to.onToken(token);
        }

        @Override
        public void onReasoning(String delta) {
            to.onReasoning(delta);
        }

        @Override
        public void onContent(String delta) {
            to.onContent(delta);
        }

        @Override
        public void onToolCallStart(String fn) {
            to.onToolCallStart(fn);
        }

        @Override
        public void onToolCallDelta(String fn, String delta) {
            to.onToolCallDelta(fn, delta);
        }

        @Override
        public void onToolCall(String fn, String args) {
            to.onToolCall(fn, args);
        }

        @Override
        public int topLogprobs() {
            return to.topLogprobs();
        }

        @Override
        public void onLogprobs(TokenLogprob logprobs) {
            to.onLogprobs(logprobs);
        }

        @Override
        public void onMalformed(String reason, String text) {
            to.onMalformed(reason, text);
        }
    }
}
