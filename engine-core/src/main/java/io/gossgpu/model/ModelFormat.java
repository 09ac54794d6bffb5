package io.gossgpu.model;

/** The file layouts goss-gpu reads. */
public enum ModelFormat {
    /** OpenAI's {@code original/} folder: model.safetensors + config.json, MXFP4 as .blocks/.scales. */
    ORIGINAL,
    /** Hugging Face transformers layout: sharded model-*.safetensors + index + HF config.json. */
    HF,
    /** A single .gguf file as written by llama.cpp's converter (architecture "gpt-oss"). */
    GGUF
}
