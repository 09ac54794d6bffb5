package io.gossgpu.metal;

import static io.gossgpu.metal.bindings.goss_metal_h.*;

import io.gossgpu.GossException;
import io.gossgpu.backend.BackendOptions;
import io.gossgpu.device.DeviceKernel;
import io.gossgpu.device.Grid;
import io.gossgpu.device.KernelLaunch;
import io.gossgpu.device.KernelParams;
import io.gossgpu.device.Launcher;
import io.gossgpu.metal.MetalDriver.Buf;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;

/**
 * The Metal {@link Launcher}: compute pipelines of the kernel library by function name ({@link MetalKernel}, each with
 * its threadgroup-size knob), encoded into the driver's pending command buffer (a serial compute encoder, so each
 * dispatch sees the previous one's writes): buffers at indices 0, 1, … with their offsets (setBuffer), threadgroup
 * memory at its own indices 0, 1, … (setThreadgroupMemoryLength), the params struct at the next buffer index
 * (setBytes), then dispatchThreadgroups. An {@link Grid#items} grid takes the kernel's knob's threadgroup size.
 */
final class MetalLauncher implements Launcher<Buf>, AutoCloseable {
    /** A compute pipeline, the most threads it can run per threadgroup and its knob's threadgroup size. */
    record Kernel(String name, MemorySegment pipeline, int maxThreads, int threads) implements DeviceKernel {}

    private final MetalDriver metal;
    private final MemorySegment lib;
    private final BackendOptions options;
    private final Map<MetalKernel, Kernel> kernels = new EnumMap<>(MetalKernel.class);
    private final Arena arena = Arena.ofShared();
    private final MemorySegment paramBytes = arena.allocate(256, 16);
    private final Launch launch = new Launch();

    MetalLauncher(MetalDriver metal, MemorySegment lib, BackendOptions options) {
        this.metal = metal;
        this.lib = lib;
        this.options = options;
    }

    @Override
    public Kernel kernel(String name) {
        MetalKernel k;
        try {
            k = MetalKernel.valueOf(name.toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new GossException("metal: kernel " + name + " is not one the backend dispatches");
        }
        return kernel(k);
    }

    /** The pipeline of {@code kernel}, made on first use. */
    Kernel kernel(MetalKernel kernel) {
        Kernel k = kernels.get(kernel);
        if (k != null) return k;
        String name = kernel.function;
        MemorySegment p = goss_mtl_pipeline_create(lib, arena.allocateFrom(name));
        if (p.equals(MemorySegment.NULL))
            throw new GossException("metal: kernel " + name + ": " + MetalNative.lastError());
        int max = goss_mtl_pipeline_max_threads(p);
        k = new Kernel(name, p, max, kernel.threads(options, max));
        kernels.put(kernel, k);
        return k;
    }

    @Override
    public KernelLaunch<Buf> launch(DeviceKernel kernel) {
        return launch.start((Kernel) kernel);
    }

    private final class Launch implements KernelLaunch<Buf> {
        private MemorySegment c;
        private Kernel k;
        private int buffers, locals;

        Launch start(Kernel kernel) {
            k = kernel;
            c = metal.commandBuffer();
            buffers = 0;
            locals = 0;
            goss_mtl_cmd_set_pipeline(c, k.pipeline());
            return this;
        }

        @Override
        public Launch buffer(Buf b, long offset) {
            goss_mtl_cmd_set_buffer(c, buffers++, b.handle, offset);
            return this;
        }

        @Override
        public Launch local(long bytes) {
            goss_mtl_cmd_set_threadgroup_memory(c, locals++, Math.toIntExact(bytes));
            return this;
        }

        @Override
        public void run(KernelParams p, Grid grid) {
            MemorySegment bytes = p.writeTo(paramBytes);
            goss_mtl_cmd_set_bytes(c, buffers++, bytes, bytes.byteSize());
            if (grid.empty()) return;
            int threads = grid.apiGroups() ? k.threads() : grid.threads();
            long gx = grid.apiGroups() ? (grid.x() + threads - 1) / threads : grid.x();
            if (gx > Integer.MAX_VALUE || grid.y() > Integer.MAX_VALUE || grid.z() > Integer.MAX_VALUE)
                throw new GossException("metal: kernel " + k.name() + ": " + grid + " threadgroups");
            if (goss_mtl_cmd_dispatch(c, (int) gx, (int) grid.y(), (int) grid.z(), threads, 1, 1) != 0)
                throw new GossException("metal: kernel " + k.name() + ": " + MetalNative.lastError());
        }
    }

    /** Releases the pipelines. */
    @Override
    public void close() {
        for (Kernel k : kernels.values()) goss_mtl_pipeline_release(k.pipeline());
        kernels.clear();
        arena.close();
    }
}
