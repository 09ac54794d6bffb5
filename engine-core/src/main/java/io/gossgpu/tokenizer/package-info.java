/**
 * The o200k_harmony tokenizer of gpt-oss.
 *
 * <ul>
 *   <li>{@link io.gossgpu.tokenizer.O200kHarmony}: encode (ordinary text, or with special tokens), decode, special
 *       token lookup, vocabulary size 201088. Token for token equal to OpenAI's tiktoken (see the parity fixture
 *       under {@code src/test/resources/tokenizer}).</li>
 *   <li>{@link io.gossgpu.tokenizer.StreamingDecoder}: text from tokens arriving one at a time, whole characters only.</li>
 *   <li>{@link io.gossgpu.tokenizer.GgufVocabCheck}: compares a GGUF {@code tokenizer.ggml.tokens} list with the built-in vocabulary.</li>
 * </ul>
 */
package io.gossgpu.tokenizer;
