package io.gossgpu.device;

import io.gossgpu.GossException;
import io.gossgpu.backend.ExpertPlacement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Per layer, whether its MoE experts run on the CPU (the cpu backend, from host memory) or on the GPU with the rest
 * of the layer. Everything that is not an expert (attention, router, norms, embeddings, the KV cache) stays on the GPU.
 */
public final class ExpertPlan {
    private final boolean[] onCpu;

    private ExpertPlan(boolean[] onCpu) {
        this.onCpu = onCpu;
    }

    /** Every layer's experts on the GPU (no split). */
    /** The plan of a fixed request ({@code --cpu-moe}, {@code --n-cpu-moe N}) for {@code layers} layers; {@code auto} needs the device. */
    static ExpertPlan fixed(ExpertPlacement request, int layers) {
        return switch (request.mode()) {
            case ALL_ON_CPU -> allOnCpu(layers);
            case FIRST_N -> firstOnCpu(layers, request.cpuLayers());
            case AUTO -> throw new IllegalStateException("auto is planned against the device");
        };
    }

    public static ExpertPlan allOnGpu(int layers) {
        return new ExpertPlan(new boolean[layers]);
    }

    /** Every layer's experts on the CPU ({@code --cpu-moe}). */
    public static ExpertPlan allOnCpu(int layers) {
        return firstOnCpu(layers, layers);
    }

    /** The experts of layers {@code 0 .. n−1} on the CPU, the rest on the GPU ({@code --n-cpu-moe n}, as llama.cpp counts). */
    public static ExpertPlan firstOnCpu(int layers, int n) {
        if (n < 0 || n > layers)
            throw new GossException("--n-cpu-moe must be between 0 and the model's " + layers + " layers, got " + n);
        boolean[] c = new boolean[layers];
        Arrays.fill(c, 0, n, true);
        return new ExpertPlan(c);
    }

    /** The experts of exactly the listed layers on the CPU. */
    public static ExpertPlan layersOnCpu(int layers, int... cpuLayers) {
        boolean[] c = new boolean[layers];
        for (int l : cpuLayers) {
            if (l < 0 || l >= layers)
                throw new GossException("layer " + l + " is outside the model's layers 0.." + (layers - 1));
            c[l] = true;
        }
        return new ExpertPlan(c);
    }

    public int layers() {
        return onCpu.length;
    }

    public boolean onCpu(int layer) {
        return onCpu[layer];
    }

    /** How many layers' experts run on the CPU. */
    public int cpuLayers() {
        int n = 0;
        for (boolean b : onCpu) if (b) n++;
        return n;
    }

    /** Whether any experts run on the CPU (the model is split at all). */
    public boolean splits() {
        return cpuLayers() > 0;
    }

    /** "experts of layers 0-11 on the CPU, 12-23 on the GPU", or of all layers on one side. */
    public String describe() {
        int n = cpuLayers();
        if (n == 0) return "experts of all " + layers() + " layers on the GPU";
        if (n == layers()) return "experts of all " + layers() + " layers on the CPU";
        return "experts of layers " + ranges(true) + " on the CPU, " + ranges(false) + " on the GPU";
    }

    /** Runs of layers on one side, "0-11,14". */
    private String ranges(boolean cpu) {
        List<String> out = new ArrayList<>();
        for (int l = 0; l < onCpu.length; l++) {
            if (onCpu[l] != cpu) continue;
            int end = l;
            while (end + 1 < onCpu.length && onCpu[end + 1] == cpu) end++;
            out.add(end == l ? Integer.toString(l) : l + "-" + end);
            l = end;
        }
        return String.join(",", out);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ExpertPlan p && Arrays.equals(onCpu, p.onCpu);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(onCpu);
    }

    @Override
    public String toString() {
        return describe();
    }
}
