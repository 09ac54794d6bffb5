package io.gossgpu.api;

import io.gossgpu.GossException;
import io.gossgpu.constrain.DocumentConstraint;
import io.gossgpu.generate.GenerationOptions;
import io.gossgpu.generate.GenerationResult;
import io.gossgpu.generate.Session;
import io.gossgpu.tokenizer.O200kHarmony;
import io.gossgpu.tokenizer.StreamingDecoder;
import java.util.List;
import java.util.Set;

/**
 * Raw text completion: the prompt is encoded as ordinary text (no Harmony), and the model continues
 * it until {@code <|endoftext|>}, {@code <|return|>} or the token limit; the options' response format (a grammar,
 * say), if any, holds the whole continuation. Each call starts afresh. One call at a time,
 * as a {@link Chat} takes one reply at a time (a second is refused at once); {@link #cancel} and {@link #close} as there.
 */
public final class Completion implements AutoCloseable {
    private final Engine engine;
    private final ChatOptions options;
    private final Session session;
    private final O200kHarmony tok = O200kHarmony.get();
    private final OneReplyAtATime use = new OneReplyAtATime("completion");

    Completion(Engine engine, ChatOptions options) {
        this.engine = engine;
        this.options = options;
        // no rollback slack (options.swaRollback() is for chats): each call starts afresh
        this.session = new Session(engine.scheduler(), engine.kvCacheSpec(options.contextLength(), 0), engine.loadMs())
                .decodableVocabulary(O200kHarmony.get().vocabSize());
    }

    public Reply complete(String prompt, ChatListener listener) {
        return complete(prompt, options, listener);
    }

    /**
     * {@link #complete(String, ChatListener)} with this call's own token limit, sampling and response format, taken
     * from {@code call} (servers, whose requests each carry their parameters): a format holds the continuation from
     * its first token, which ends with {@code <|endoftext|>} once the document is complete.
     */
    public Reply complete(String prompt, ChatOptions call, ChatListener listener) {
        use.begin();
        try {
            return run(prompt, call.maxTokens(), call.sampling(), call.responseFormat(), listener);
        } finally {
            use.end();
        }
    }

    private Reply run(String prompt, int maxTokens, Sampling sampling, ResponseFormat format, ChatListener listener) {
        ChatListener l = listener != null ? listener : new ChatListener() {};
        int[] tokens = tok.encode(prompt);
        int vocab = engine.config().vocabSize();
        for (int t : tokens)
            if (t >= vocab)
                throw new GossException("the prompt has token " + t + " but this model's vocabulary has only " + vocab
                        + " tokens; use a model with the o200k_harmony vocabulary");
        session.reset();
        StreamingDecoder decoder = tok.newStreamingDecoder();
        StringBuilder text = new StringBuilder();
        GenerationOptions gen = new GenerationOptions(
                maxTokens,
                Set.of(O200kHarmony.END_OF_TEXT, O200kHarmony.RETURN),
                sampling.samplerConfig(),
                l.topLogprobs(),
                format == null ? null : new DocumentConstraint(format.matcher(), O200kHarmony.END_OF_TEXT),
                sampling.adjustments());
        GenerationResult r = session.generate(
                tokens,
                gen,
                token -> {
                    l.onToken(token);
                    if (token == O200kHarmony.END_OF_TEXT || token == O200kHarmony.RETURN) return;
                    String s = token < tok.vocabSize() ? decoder.accept(token) : "";
                    if (!s.isEmpty()) {
                        text.append(s);
                        l.onContent(s);
                    }
                },
                lp -> l.onLogprobs(TokenLogprob.of(lp)));
        String rest = decoder.flush();
        if (!rest.isEmpty()) {
            text.append(rest);
            l.onContent(rest);
        }
        return Reply.of(text.toString(), "", List.of(), r);
    }

    public void cancel() {
        session.cancel();
    }

    @Override
    public void close() {
        use.close();
        session.close();
        engine.forget(this);
    }
}
