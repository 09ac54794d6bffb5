/**
 * The goss-gpu engine: the api, the backend SPI, the forward pass, generation, model files, quantization, the
 * tokenizer, Harmony, constrained decoding and the reference backend. No native code: the cpu backend (backend-cpu),
 * the GPU device layer (gpu-device) and the GPU backends are modules of their own, found through {@code
 * BackendProvider}. The qualified exports name the project's own named modules that build on the core.
 */
@SuppressWarnings("module") // the qualified exports name modules built after this one
module io.gossgpu.core {
    requires transitive com.fasterxml.jackson.databind; // config.json, safetensors headers, harmony JSON, schemas
    requires jtokkit; // o200k_harmony tokenizer (an automatic module)

    exports io.gossgpu; // GossException, the one exception every call may throw
    exports io.gossgpu.api;
    exports io.gossgpu.backend; // the SPI: backends implement BackendProvider and Backend

    // what a backend needs besides the SPI: the model's tensors, quant formats, the reference backend's host tensors
    exports io.gossgpu.model to
            io.gossgpu.cpu,
            io.gossgpu.device,
            io.gossgpu.cuda,
            io.gossgpu.opencl,
            io.gossgpu.metal;
    exports io.gossgpu.quant to
            io.gossgpu.cpu,
            io.gossgpu.device,
            io.gossgpu.cuda;
    exports io.gossgpu.reference to
            io.gossgpu.cpu;
    exports io.gossgpu.forward to
            io.gossgpu.cpu,
            io.gossgpu.device; // the warm-up and the split step run the executor
    exports io.gossgpu.generate to
            io.gossgpu.cpu; // the warm-up decodes a tiny model

    uses io.gossgpu.backend.BackendProvider;
    uses io.gossgpu.model.CheckpointReader;

    provides io.gossgpu.backend.BackendProvider with
            io.gossgpu.reference.ReferenceBackendProvider;
    provides io.gossgpu.model.CheckpointReader with
            io.gossgpu.model.gguf.GgufCheckpointReader,
            io.gossgpu.model.safetensors.SafetensorsCheckpointReader;
}
