/**
 * llama.cpp's GGUF format for gpt-oss: {@link io.gossgpu.model.gguf.GgufReader} (validating v2/v3
 * reader, mapped or fully loaded), {@link io.gossgpu.model.gguf.GgufConfig} (llama.cpp's
 * {@code gpt-oss.*} metadata keys to a {@link io.gossgpu.model.ModelConfig}),
 * {@link io.gossgpu.model.gguf.GgufFileWriter} (generic GGUF writer, fills a mapped output file in
 * place) and {@link io.gossgpu.model.gguf.GgufWriter} (generated test models in llama.cpp's
 * gpt-oss layout).
 */
package io.gossgpu.model.gguf;
