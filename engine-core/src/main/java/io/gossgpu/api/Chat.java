package io.gossgpu.api;

import io.gossgpu.generate.GenerationOptions;
import io.gossgpu.generate.GenerationResult;
import io.gossgpu.generate.Session;
import io.gossgpu.harmony.DeveloperContent;
import io.gossgpu.harmony.HarmonyEvent;
import io.gossgpu.harmony.HarmonyRenderer;
import io.gossgpu.harmony.HarmonyStreamParser;
import io.gossgpu.harmony.Message;
import io.gossgpu.harmony.ParsedMessage;
import io.gossgpu.harmony.Role;
import io.gossgpu.harmony.SystemContent;
import io.gossgpu.harmony.ToolDescription;
import io.gossgpu.tokenizer.O200kHarmony;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Flow;

/**
 * A multi-turn Harmony conversation with its own KV cache. Each {@link #send} renders the whole
 * conversation and keeps the cache up to where the rendering first differs from what is cached: all of
 * it when the new user turn is simply appended, up to the start of the last reply when Harmony drops
 * that reply's reasoning from the history. Only the tokens after that are prefilled; when the cache
 * cannot go back that far (sliding-window layers, see {@link ChatOptions#swaRollback()}) the whole
 * conversation is.
 *
 * <p>One reply at a time: while a reply is being generated, another {@link #send} or {@link #sendToolResult} (from
 * another thread, or from a listener of the running reply) is refused at once with a {@link io.gossgpu.GossException}
 * and leaves the conversation as it was. Open several chats for parallel conversations (their steps are batched).
 * {@link #cancel} and {@link #close} may be called from any thread: both end the reply under way with stop reason
 * {@link StopReason#CANCELLED}; close waits for its step in flight, then frees the chat's KV cache. A closed chat
 * refuses replies with a GossException.
 */
public final class Chat implements AutoCloseable {
    private final Engine engine;
    private final ChatOptions options;
    private final Session session;
    private final O200kHarmony tok = O200kHarmony.get();
    private static final HarmonyRenderer RENDERER = new HarmonyRenderer(O200kHarmony.get());
    private final List<Message> conversation = new ArrayList<>();
    private int[] cached = new int[0];
    /** Length of the prompt the last reply was generated from (a prefix of {@code cached}). */
    private int cachedPrompt;

    private int lastPrefill;
    /** The tools {@link #offerTools} offered: {@link #send(String, ChatListener)}'s replies are held to their rules. */
    private List<Tool> offered = List.of();

    private final OneReplyAtATime use = new OneReplyAtATime("chat");

    Chat(Engine engine, ChatOptions options) {
        this.engine = engine;
        this.options = options;
        this.session = new Session(
                        engine.scheduler(),
                        engine.kvCacheSpec(options.contextLength(), options.swaRollback()),
                        engine.loadMs())
                .decodableVocabulary(O200kHarmony.get().vocabSize());
        conversation.add(systemMessage(options));
        if (options.instructions() != null && !options.instructions().isBlank())
            conversation.add(Message.developer(DeveloperContent.instructions(options.instructions())));
    }

    /** The conversation so far (system and developer messages first); internal, for tests (Harmony messages). */
    List<Message> conversation() {
        return List.copyOf(conversation);
    }

    /**
     * Sends a user message and generates the assistant's reply, streaming it to {@code listener}. A tool choice in
     * this chat's options that names no tool {@link #offerTools offered} fails with a GossException.
     */
    public Reply send(String userText, ChatListener listener) {
        return exclusively(() -> {
            ReplyRules rules = ownRules();
            conversation.add(Message.user(userText));
            return respond(listener, rules);
        });
    }

    /** Gives the result of a tool call back to the model and generates what it says next. */
    public Reply sendToolResult(String functionName, String output, ChatListener listener) {
        return exclusively(() -> {
            ReplyRules rules = ownRules();
            conversation.add(Message.toolResult(functionName, output));
            return respond(listener, rules);
        });
    }

    /**
     * Replaces the conversation with Harmony {@code messages} as given (system message first) and generates the next
     * assistant turn; internal, for tests that hold their conversations as Harmony messages (the demo's held-out set,
     * cache reuse). Applications give a {@link Conversation} to {@link #send(Conversation, ChatOptions, ChatListener)}.
     */
    Reply reply(List<Message> messages, int maxTokens, Sampling sampling, ChatListener listener) {
        if (messages.isEmpty()) throw new IllegalArgumentException("no messages");
        return exclusively(() -> {
            conversation.clear();
            conversation.addAll(messages);
            return respond(listener, maxTokens, sampling, ReplyRules.FREE);
        });
    }

    /**
     * How many tokens of {@code prompt} (a conversation's {@link Conversation#promptTokens})
     * the next reply would take from this chat's KV cache instead of prefilling: the longest common prefix of the
     * prompt and the cached tokens (at most all but the prompt's last token, whose logits the reply needs) when the
     * cache can resume there ({@link Session#canRollbackTo}), else 0.
     */
    public int cachedPrefixLength(int[] prompt) {
        int keep = Math.min(commonPrefix(prompt, cached), prompt.length - 1);
        return keep > 0 && session.canRollbackTo(keep) ? keep : 0;
    }

    /**
     * Whether {@code prompt} continues the conversation this chat's cache holds: it starts with the whole prompt of
     * the last reply, whatever it then does with that reply (a client sending the history back without the
     * reasoning, or asking for the same reply again). Servers use it with {@link #cachedPrefixLength} to route a request to the
     * session that holds its history rather than to one that merely shares its system message.
     */
    public boolean continues(int[] prompt) {
        return cachedPrompt > 0 && commonPrefix(prompt, cached) >= cachedPrompt;
    }

    /** Tokens of the last reply's whole prompt, cached and prefilled (frameworks report it as input token usage). */
    public int lastPromptTokens() {
        return cachedPrompt;
    }

    /** Tokens this chat's KV cache holds for the next reply to reuse. */
    int cachedTokens() {
        return cached.length;
    }

    /** Tokens the last reply had to prefill (the rest of its prompt came from the cache). */
    public int lastPrefillTokens() {
        return lastPrefill;
    }

    /** Drops the cache: the next reply prefills the whole conversation (tests compare both paths). */
    void forgetCache() {
        cached = new int[0];
        cachedPrompt = 0;
    }

    /** Stops the reply being generated (from any thread); the reply returns with stop reason CANCELLED. */
    public void cancel() {
        session.cancel();
    }

    /**
     * Offers function {@code tools} to the model from the next {@link #send} on (an empty list withdraws them): the
     * developer message now lists them after this chat's instructions. The model's calls come back in
     * {@link Reply#toolCalls()}; give each result back with {@link #sendToolResult}.
     */
    public void offerTools(List<Tool> tools) {
        Message developer = developerMessage(options.instructions(), tools);
        exclusively(
                () -> { // the conversation is the running reply's until it ends
                    boolean had = conversation.size() > 1 && conversation.get(1).role() == Role.DEVELOPER;
                    if (had && developer != null) conversation.set(1, developer);
                    else if (had) conversation.remove(1);
                    else if (developer != null) conversation.add(1, developer);
                    offered = List.copyOf(tools);
                    return null;
                });
    }

    /**
     * Replaces the conversation with {@code c} and generates the next assistant turn with this chat's options. The KV
     * cache is kept as far as the new conversation repeats the old one, so giving the whole conversation each time
     * costs only what was added.
     */
    public Reply send(Conversation c, ChatListener listener) {
        return send(c, options, listener);
    }

    /**
     * {@link #send(Conversation, ChatListener)} with this reply's own options, taken from {@code reply} (for
     * frameworks and servers, whose requests each carry their parameters): its token limit, sampling (with logit
     * bias and penalties), response format, and the system message's reasoning effort and date; {@code reply}'s
     * instructions stand where {@code c} has none. The context length and sliding-window slack stay as the chat was
     * opened with. The prompt is {@link Conversation#promptTokens}{@code (reply)}; the arguments of calls to a
     * {@link Tool#strict() strict} tool follow its schema, and {@code reply}'s {@link ToolChoice} may insist on a call
     * (one naming a tool that {@code c} does not offer fails with a GossException).
     */
    public Reply send(Conversation c, ChatOptions reply, ChatListener listener) {
        List<Message> messages = messages(c, reply);
        ReplyRules rules = ReplyRules.of(reply.responseFormat(), c.tools(), reply.toolChoice());
        return exclusively(() -> {
            conversation.clear();
            conversation.addAll(messages);
            return respond(listener, reply.maxTokens(), reply.sampling(), rules);
        });
    }

    /** The Harmony messages of {@code c} under {@code options}: system, developer (if any), then the turns. */
    static List<Message> messages(Conversation c, ChatOptions options) {
        List<Message> out = new ArrayList<>();
        out.add(systemMessage(options));
        Message developer =
                developerMessage(c.instructions() != null ? c.instructions() : options.instructions(), c.tools());
        if (developer != null) out.add(developer);
        for (Turn t : c.turns()) out.add(TurnMessages.of(t));
        return out;
    }

    /** The tokens of a reply's prompt: {@code messages} rendered, with {@code format}'s schema shown to the model. */
    static int[] render(List<Message> messages, ResponseFormat format) {
        return RENDERER.renderForCompletion(promptMessages(messages, format));
    }

    private static Message systemMessage(ChatOptions options) {
        return Message.system(SystemContent.defaults(options.currentDate(), options.reasoningEffort()));
    }

    /**
     * {@link #send(String, ChatListener)} on a thread of its own; {@code listener} (may be null) is called on that
     * thread. Cancelling the future stops the reply. Do not send on this chat again before the future is done.
     */
    public CompletableFuture<Reply> sendAsync(String userText, ChatListener listener) {
        return AsyncReplies.future(this, l -> send(userText, l), listener);
    }

    /** {@link #send(Conversation, ChatListener)} on a thread of its own, as {@link #sendAsync(String, ChatListener)}. */
    public CompletableFuture<Reply> sendAsync(Conversation c, ChatListener listener) {
        return AsyncReplies.future(this, l -> send(c, l), listener);
    }

    /** {@link #send(Conversation, ChatOptions, ChatListener)} on a thread of its own, as {@link #sendAsync(String, ChatListener)}. */
    public CompletableFuture<Reply> sendAsync(Conversation c, ChatOptions reply, ChatListener listener) {
        return AsyncReplies.future(this, l -> send(c, reply, l), listener);
    }

    /**
     * The reply to {@code userText} as events ({@link ReplyEvent}), ending with {@link ReplyEvent.Done}. The reply
     * starts when the publisher is subscribed (one subscriber); cancelling the subscription stops it.
     */
    public Flow.Publisher<ReplyEvent> stream(String userText) {
        return AsyncReplies.publisher(this, l -> send(userText, l));
    }

    /** The reply to conversation {@code c} as events, as {@link #stream(String)}. */
    public Flow.Publisher<ReplyEvent> stream(Conversation c) {
        return AsyncReplies.publisher(this, l -> send(c, l));
    }

    private static Message developerMessage(String instructions, List<Tool> tools) {
        boolean hasInstructions = instructions != null && !instructions.isBlank();
        if (!hasInstructions && tools.isEmpty()) return null;
        return Message.developer(new DeveloperContent(
                hasInstructions ? instructions : null,
                tools.stream().map(Tool::toDescription).toList()));
    }

    /**
     * Runs {@code work} (a change of the conversation, and usually the reply to it) as this chat's one request under
     * way ({@link OneReplyAtATime}): a second request meanwhile is refused before it changes anything.
     */
    private <T> T exclusively(java.util.function.Supplier<T> work) {
        use.begin();
        try {
            return work.get();
        } finally {
            use.end();
        }
    }

    /** The rules of a reply with this chat's own response format and tool choice, over the tools it offers. */
    private ReplyRules ownRules() {
        return ReplyRules.of(options.responseFormat(), offered, options.toolChoice());
    }

    /** The reply with this chat's own token limit and sampling. */
    private Reply respond(ChatListener listener, ReplyRules rules) {
        return respond(listener, options.maxTokens(), options.sampling(), rules);
    }

    private Reply respond(ChatListener listener, int maxTokens, Sampling sampling, ReplyRules rules) {
        ChatListener l = listener != null ? listener : new ChatListener() {};
        int[] prompt = render(conversation, rules.format());
        // Keep the cache up to where the prompt leaves it (at least the last prompt token runs again, for its
        // logits); going back past what the sliding-window rings still hold means starting over.
        int reuse = cachedPrefixLength(prompt);
        if (reuse == 0 || !session.rollbackTo(reuse)) {
            session.reset();
            reuse = 0;
        }
        int[] fresh = Arrays.copyOfRange(prompt, reuse, prompt.length);
        lastPrefill = fresh.length;
        cached = new int[0]; // until this reply is complete the cache holds neither the old nor the new conversation
        cachedPrompt = 0;

        Set<String> declared = declaredFunctions(conversation);
        HarmonyStreamParser parser = new HarmonyStreamParser(tok);
        StringBuilder content = new StringBuilder(), reasoning = new StringBuilder();
        List<Reply.ToolCall> calls = new ArrayList<>();
        GenerationOptions gen = new GenerationOptions(
                maxTokens,
                Set.of(O200kHarmony.RETURN, O200kHarmony.CALL),
                sampling.samplerConfig(),
                l.topLogprobs(),
                rules.constraint(declared),
                sampling.adjustments());
        GenerationResult r = session.generate(
                fresh,
                gen,
                token -> {
                    l.onToken(token);
                    for (HarmonyEvent e : parser.accept(token))
                        dispatch(e, parser, declared, l, content, reasoning, calls);
                },
                lp -> l.onLogprobs(TokenLogprob.of(lp)));
        for (HarmonyEvent e : parser.finish()) dispatch(e, parser, declared, l, content, reasoning, calls);
        int[] generated = r.tokens();
        // The cache holds the prompt and every generated token but the last (it was sampled, never run).
        cached = concat(prompt, Arrays.copyOf(generated, Math.max(0, generated.length - 1)));
        cachedPrompt = prompt.length;
        for (ParsedMessage m : parser.messages()) conversation.add(m.toMessage());
        return Reply.of(content.toString(), reasoning.toString(), calls, r);
    }

    /** The messages a reply's prompt renders: {@code conversation} with {@code format}'s schema shown to the model. */
    static List<Message> promptMessages(List<Message> conversation, ResponseFormat format) {
        return HarmonyRenderer.withResponseFormat(conversation, format == null ? null : format.section());
    }

    /** The function tools the conversation's developer message offers: the only calls a reply reports as calls. */
    static Set<String> declaredFunctions(List<Message> conversation) {
        Set<String> names = new HashSet<>();
        for (Message m : conversation)
            if (m.role() == Role.DEVELOPER && m.developer() != null)
                for (ToolDescription t : m.developer().functionTools()) names.add(t.name());
        return names;
    }

    /**
     * Passes one parser event on. A call to a function the conversation did not offer (gpt-oss knows tool formats and
     * sometimes calls one unasked, or a built-in tool such as {@code browser.search} that no one runs here) is no tool
     * call: its text is content, so an application never receives a call it cannot run (as the server answers it).
     */
    private static void dispatch(
            HarmonyEvent e,
            HarmonyStreamParser parser,
            Set<String> declared,
            ChatListener l,
            StringBuilder content,
            StringBuilder reasoning,
            List<Reply.ToolCall> calls) {
        switch (e) {
            case HarmonyEvent.MessageStart s -> {
                String fn = s.header().functionName().orElse(null);
                if (fn != null && declared.contains(fn)) l.onToolCallStart(fn);
            }
            case HarmonyEvent.ContentDelta d -> {
                if (parser.currentRecipient() != null && !"all".equals(parser.currentRecipient())) { // tool arguments
                    ParsedMessage h = parser.currentHeader();
                    String fn = h != null ? h.functionName().orElse(null) : null;
                    if (fn != null && declared.contains(fn)) {
                        l.onToolCallDelta(fn, d.text());
                    } else {
                        content.append(d.text());
                        l.onContent(d.text());
                    }
                    return;
                }
                if ("analysis".equals(parser.currentChannel())) {
                    reasoning.append(d.text());
                    l.onReasoning(d.text());
                } else {
                    content.append(d.text());
                    l.onContent(d.text());
                }
            }
            case HarmonyEvent.ToolCall c -> {
                if (c.functionName() == null || !declared.contains(c.functionName()))
                    return; // its text went out as content
                calls.add(new Reply.ToolCall(c.functionName(), c.arguments()));
                l.onToolCall(c.functionName(), c.arguments());
            }
            case HarmonyEvent.Malformed m -> l.onMalformed(m.reason(), "");
            default -> {}
        }
    }

    private static int commonPrefix(int[] a, int[] b) {
        int n = Arrays.mismatch(a, b);
        return n < 0 ? a.length : n;
    }

    private static int[] concat(int[] a, int[] b) {
        int[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    /**
     * Ends the reply under way (as cancelled), waits for its step in flight, and frees the KV cache; from any thread,
     * once (the engine's close closes its chats too).
     */
    @Override
    public void close() {
        use.close();
        session.close();
        engine.forget(this);
    }
}
