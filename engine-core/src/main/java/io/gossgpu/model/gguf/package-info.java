/**
 * llama.cpp's GGUF format for gpt-oss: {@link io.gossgpu.model.gguf.GgufReader} (validating v2/v3
 * reader, mapped or fully loaded), {@link io.gossgpu.model.gguf.GgufConfig} (llama.cpp's
 * {@code gpt-oss.*} metadata keys to a {@link io.gossgpu.model.ModelConfig})
 * and {@link io.gossgpu.model.gguf.GgufFileWriter} (generic GGUF writer, fills a mapped output file in
 * place). Generated test models in llama.cpp's gpt-oss layout are written by {@link io.gossgpu.testmodel.GgufWriter},
 * which uses this package (this package does not use it).
 */
package io.gossgpu.model.gguf;
