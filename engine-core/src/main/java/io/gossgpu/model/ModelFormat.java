package io.gossgpu.model;

/** The file layouts goss-gpu reads. */
public enum ModelFormat {
    /** OpenAI's {@code original/} folder: model.safetensors + config.json, MXFP4 as .blocks/.scales. */
    ORIGINAL,
    /** Hugging Face transformers layout: sharded model-*.safetensors + index + HF config.json. */
    HF,
    /** A .gguf file (or split set) as written by llama.cpp's converter (architecture "gpt-oss"). */
    GGUF,
    /**
     * Ollama's own first conversion of gpt-oss (architecture "gptoss", the blob {@code ollama pull gpt-oss:20b}
     * stores): OpenAI's fused QKV and interleaved gate/up experts, MXFP4 in its own block layout.
     */
    OLLAMA
}
