package io.gossgpu.cpu.matmul;

import io.gossgpu.backend.Backend;
import io.gossgpu.backend.BackendOptions;
import io.gossgpu.backend.LoadedWeights;
import io.gossgpu.cpu.CpuBackendProvider;
import io.gossgpu.generate.Session;
import io.gossgpu.model.Checkpoint;
import io.gossgpu.model.ModelWeights;
import io.gossgpu.testmodel.TestModelGenerator;
import io.gossgpu.testmodel.TestModelPresets;

/**
 * Run in a fresh JVM by {@link KernelLibraryFileTest}: loads the native cpu kernels (prints "loaded from PATH" or
 * "unavailable: WHY"), runs a prefill of a tiny model on them (prints "ran" and the first logit), then ends the JVM
 * the way a crash does, with {@link Runtime#halt}: no shutdown hooks, no {@code deleteOnExit}.
 */
public final class LoadKernelsThenHalt {
    public static void main(String[] args) {
        String why = NativeCpu.unavailableReason();
        System.out.println(
                why == null ? "loaded from " + io.gossgpu.cpu.bindings.goss_cpu_h.Library.path : "unavailable: " + why);
        if (why == null) {
            try (Checkpoint ck = new TestModelGenerator(TestModelPresets.tiny(), 1).inMemory();
                    Backend b = CpuBackendProvider.withKernels(null).create(BackendOptions.defaults());
                    LoadedWeights w = b.loadWeights(ModelWeights.of(ck));
                    Session s = new Session(b, w, 16)) {
                System.out.println("ran " + s.prefill(new int[] {1, 2, 3})[0]);
            }
        }
        System.out.flush();
        Runtime.getRuntime().halt(3);
    }
}
