package io.gossgpu.springai.autoconfigure;

import io.gossgpu.ReasoningEffort;
import io.gossgpu.api.ChatOptions;
import io.gossgpu.api.EngineOptions;
import io.gossgpu.api.Sampling;
import io.gossgpu.backend.BackendOptions;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The {@code goss.*} properties: which model to open and how ({@link EngineOptions}), and each chat's defaults
 * ({@link ChatOptions}; a Spring AI request's own options win over them).
 */
@ConfigurationProperties(prefix = "goss")
public class GossProperties {
    /** A gpt-oss checkpoint folder (original/ or Hugging Face layout) or a .gguf file. */
    private Path model;
    /** auto (the best available), reference, cpu, opencl, cuda or metal. */
    private String backend = "auto";
    /** Map the model files (true) or read them fully into memory. */
    private boolean mmap = true;
    /** Scan every weight for NaN, infinity and invalid MXFP4 scales when opening (slow). */
    private boolean checkTensors;
    /** Keep float MoE experts (BF16 fine-tunes) as floats instead of quantizing them to MXFP4. */
    private boolean floatExperts;
    /** The most prompt tokens one step runs beside other chats' decoding. */
    private int prefillChunk = EngineOptions.DEFAULT_PREFILL_CHUNK;
    /** Threads of the cpu backend (unset: every available processor). */
    private Integer threads;
    /**
     * Backend knobs and settings by their environment-variable name ({@code GOSS_CUDA_ATTENTION_BLOCK}) or its
     * property form ({@code cuda.attention.block}); they win over the process's GOSS_* environment and -Dgoss.* properties.
     */
    private Map<String, String> knobs = new LinkedHashMap<>();
    /** Tokens each chat's KV cache holds. */
    private int context = 4096;
    /** Most new tokens per reply. */
    private int maxTokens = ChatOptions.DEFAULT_MAX_TOKENS;
    /** Sampling temperature (0 is greedy). */
    private double temperature = 1.0;
    /** Nucleus sampling (1 keeps every token). */
    private double topP = 1.0;
    /** Keep the k most likely tokens (0 keeps every token). */
    private int topK;
    /** The sampler's seed (unset: a new one each start). */
    private Long seed;
    /** Harmony reasoning effort: low, medium or high. */
    private String reasoningEffort = "medium";
    /** Developer instructions for requests without a system message. */
    private String instructions;

    /** The engine these properties open; one line names the property that is wrong. */
    public EngineOptions engineOptions() {
        if (model == null)
            throw new GossStartupException(
                    "goss.model is not set: give the path of a gpt-oss checkpoint folder or .gguf file");
        BackendOptions backendOptions = BackendOptions.fromEnvironment();
        if (threads != null)
            backendOptions = backendOptions.with("GOSS_CPU_THREADS", threads.toString(), "goss.threads");
        for (var k : knobs.entrySet())
            backendOptions = backendOptions.with(knobName(k.getKey()), k.getValue(), "goss.knobs");
        return EngineOptions.of(model)
                .withBackend(backend)
                .withMmap(mmap)
                .withCheckTensors(checkTensors)
                .withFloatExperts(floatExperts)
                .withBackendOptions(backendOptions)
                .withPrefillChunk(prefillChunk);
    }

    /** {@code cuda.attention.block}, {@code GOSS_CUDA_ATTENTION_BLOCK} and {@code goss-cuda-attention-block} all name {@code GOSS_CUDA_ATTENTION_BLOCK}. */
    static String knobName(String key) {
        String n = key.replace('.', '_').replace('-', '_').toUpperCase(Locale.ROOT);
        return n.startsWith("GOSS_") ? n : "GOSS_" + n;
    }

    /** Each chat's defaults. */
    public ChatOptions chatOptions() {
        Sampling sampling =
                new Sampling((float) temperature, topK, (float) topP, 0, seed != null ? seed : System.nanoTime());
        return ChatOptions.defaults()
                .withContextLength(context)
                .withMaxTokens(maxTokens)
                .withSampling(sampling)
                .withReasoningEffort(ReasoningEffort.parse(reasoningEffort))
                .withInstructions(instructions);
    }

    public Path getModel() {
        return model;
    }

    public void setModel(Path model) {
        this.model = model;
    }

    public String getBackend() {
        return backend;
    }

    public void setBackend(String backend) {
        this.backend = backend;
    }

    public boolean isMmap() {
        return mmap;
    }

    public void setMmap(boolean mmap) {
        this.mmap = mmap;
    }

    public boolean isCheckTensors() {
        return checkTensors;
    }

    public void setCheckTensors(boolean checkTensors) {
        this.checkTensors = checkTensors;
    }

    public boolean isFloatExperts() {
        return floatExperts;
    }

    public void setFloatExperts(boolean floatExperts) {
        this.floatExperts = floatExperts;
    }

    public int getPrefillChunk() {
        return prefillChunk;
    }

    public void setPrefillChunk(int prefillChunk) {
        this.prefillChunk = prefillChunk;
    }

    public Integer getThreads() {
        return threads;
    }

    public void setThreads(Integer threads) {
        this.threads = threads;
    }

    public Map<String, String> getKnobs() {
        return knobs;
    }

    public void setKnobs(Map<String, String> knobs) {
        this.knobs = knobs;
    }

    public int getContext() {
        return context;
    }

    public void setContext(int context) {
        this.context = context;
    }

    public int getMaxTokens() {
        return maxTokens;
    }

    public void setMaxTokens(int maxTokens) {
        this.maxTokens = maxTokens;
    }

    public double getTemperature() {
        return temperature;
    }

    public void setTemperature(double temperature) {
        this.temperature = temperature;
    }

    public double getTopP() {
        return topP;
    }

    public void setTopP(double topP) {
        this.topP = topP;
    }

    public int getTopK() {
        return topK;
    }

    public void setTopK(int topK) {
        this.topK = topK;
    }

    public Long getSeed() {
        return seed;
    }

    public void setSeed(Long seed) {
        this.seed = seed;
    }

    public String getReasoningEffort() {
        return reasoningEffort;
    }

    public void setReasoningEffort(String reasoningEffort) {
        this.reasoningEffort = reasoningEffort;
    }

    public String getInstructions() {
        return instructions;
    }

    public void setInstructions(String instructions) {
        this.instructions = instructions;
    }
}
