/**
 * The goss-gpu engine (issue 41). An application sees the api package, the project's exception and the backend SPI;
 * everything else is internal.
 *
 * <p>The qualified exports below name the project's own modules that still reach inside: the three backends (named
 * modules) and cli, server, langchain4j, spring-ai, the Spring Boot starter and benchmarks, which run on the class path
 * today (where module boundaries do not apply) and are named here by the module names they will get. Each line says
 * why, so the list can shrink as the api grows. {@code ModuleDescriptorTest} holds the unqualified list.
 */
@SuppressWarnings("module") // the class-path modules named in the qualified exports do not exist as modules yet
module io.gossgpu.core {
    requires jdk.incubator.vector;            // the cpu backend's SIMD kernels
    requires java.management;                 // bench: load average, memory bandwidth probes
    requires jdk.management;                  // bench: com.sun.management.OperatingSystemMXBean (CPU time)
    requires com.fasterxml.jackson.databind;  // config.json, safetensors headers, harmony JSON, constrain schemas
    requires jtokkit;                         // o200k_harmony tokenizer (automatic module: jtokkit has no descriptor)

    exports io.gossgpu;                       // GossException, the one exception every call may throw
    exports io.gossgpu.api;
    exports io.gossgpu.backend;               // the SPI: custom backends implement BackendProvider and Backend

    // what a backend provider needs besides the SPI: device buffers and kernels, the model's tensors, quant formats
    exports io.gossgpu.device to io.gossgpu.cuda, io.gossgpu.opencl, io.gossgpu.metal;
    exports io.gossgpu.model to io.gossgpu.cuda, io.gossgpu.opencl, io.gossgpu.metal, io.gossgpu.cli, io.gossgpu.benchmarks;
    exports io.gossgpu.quant to io.gossgpu.cuda; // cuda splits Q8_0 blocks
    // render shows a conversation file as the Harmony messages and tokens the model sees
    exports io.gossgpu.harmony to io.gossgpu.cli;
    // cli's developer commands (bench, tune, verify, logits, make-test-model, demo) drive engine internals directly
    exports io.gossgpu.bench to io.gossgpu.cli;
    opens io.gossgpu.bench to com.fasterxml.jackson.databind; // BenchReport writes itself as JSON by reflection
    exports io.gossgpu.debug to io.gossgpu.cli;
    exports io.gossgpu.demo to io.gossgpu.cli;
    exports io.gossgpu.testmodel to io.gossgpu.cli, io.gossgpu.benchmarks;
    exports io.gossgpu.placement to io.gossgpu.cli;        // info prints the expert placement plan
    exports io.gossgpu.tokenizer to io.gossgpu.cli, io.gossgpu.benchmarks; // make-test-model's and info's vocabulary checks
    exports io.gossgpu.cpu to io.gossgpu.cli, io.gossgpu.springai.autoconfigure, io.gossgpu.benchmarks; // --threads knob by name
    // benchmarks measure the kernels and the constrained decoder one by one
    exports io.gossgpu.graph to io.gossgpu.benchmarks;
    exports io.gossgpu.constrain to io.gossgpu.benchmarks;
    exports io.gossgpu.cpu.compute to io.gossgpu.benchmarks; // ArgmaxBenchmark times the cpu kernel against the reference

    uses io.gossgpu.backend.BackendProvider;
    uses io.gossgpu.model.CheckpointReader;
    provides io.gossgpu.backend.BackendProvider with io.gossgpu.cpu.ReferenceBackendProvider, io.gossgpu.cpu.CpuBackendProvider;
    provides io.gossgpu.model.CheckpointReader
            with io.gossgpu.model.gguf.GgufCheckpointReader, io.gossgpu.model.safetensors.SafetensorsCheckpointReader;
}
