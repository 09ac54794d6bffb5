package io.gossgpu.generate;

/**
 * Wall-clock numbers of a generation. {@code timeToFirstTokenMs} runs from the start of the prefill to the
 * first sampled token; decode rates count the tokens after the first.
 */
public record Timings(double loadMs, int promptTokens, double prefillMs, double timeToFirstTokenMs,
                      int decodedTokens, double decodeMs) {
    public double prefillTokensPerSecond() {
        return prefillMs > 0 ? promptTokens * 1000.0 / prefillMs : 0;
    }

    public double decodeTokensPerSecond() {
        return decodeMs > 0 ? decodedTokens * 1000.0 / decodeMs : 0;
    }

    @Override
    public String toString() {
        return String.format("load %.0f ms, prefill %d tok at %.1f tok/s, first token %.0f ms, decode %d tok at %.1f tok/s",
                loadMs, promptTokens, prefillTokensPerSecond(), timeToFirstTokenMs, decodedTokens, decodeTokensPerSecond());
    }
}
