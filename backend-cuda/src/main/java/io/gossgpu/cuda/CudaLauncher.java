package io.gossgpu.cuda;

import io.gossgpu.GossException;
import io.gossgpu.cuda.CudaKernel.Dim3;
import io.gossgpu.device.DeviceKernel;
import io.gossgpu.device.Grid;
import io.gossgpu.device.KernelLaunch;
import io.gossgpu.device.KernelParams;
import io.gossgpu.device.Launcher;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The CUDA {@link Launcher}: kernels by name from the declared entry points ({@link CudaEntry}: which backend-cuda/kernels file
 * each is in, loaded on first use by {@link CudaModules}), launched through the backend's {@link LaunchQueue} (which
 * may record the step for a CUDA graph). A buffer argument is a device address; the launch's
 * {@link KernelLaunch#local} sizes add up to its dynamic shared memory; grid y is capped at 65535 (the kernels stride
 * over the rest). One argument array, refilled for every launch (the driver copies the values during the launch):
 * not thread-safe.
 */
final class CudaLauncher implements Launcher<Long> {
    private final LaunchQueue queue;
    private final CudaModules modules;
    private final Map<String, CudaEntry> entries = new HashMap<>();
    private final Launch launch = new Launch();

    CudaLauncher(LaunchQueue queue, CudaModules modules, List<CudaEntry> entries) {
        this.queue = queue;
        this.modules = modules;
        for (CudaEntry e : entries) this.entries.put(e.name(), e);
    }

    @Override
    public CudaKernel kernel(String name) {
        CudaEntry e = entries.get(name);
        if (e == null) throw new GossException("CUDA kernel " + name + " is not declared by the backend");
        return modules.kernel(e);
    }

    @Override
    public KernelLaunch<Long> launch(DeviceKernel kernel) {
        return launch.start((CudaKernel) kernel);
    }

    private final class Launch implements KernelLaunch<Long> {
        private final KernelArgs args = new KernelArgs();
        private CudaKernel kernel;
        private long shared;

        Launch start(CudaKernel k) {
            kernel = k;
            shared = 0;
            args.clear();
            return this;
        }

        @Override
        public Launch buffer(Long address, long offset) {
            args.ptr(address + offset);
            return this;
        }

        @Override
        public Launch local(long bytes) {
            shared += bytes;
            return this;
        }

        @Override
        public void run(KernelParams params, Grid grid) {
            if (grid.apiGroups())
                throw new IllegalArgumentException("CUDA kernel " + kernel.name() + ": a launch needs its block size");
            if (grid.empty()) return;
            args.params(params);
            queue.launch(
                    kernel,
                    new Dim3(Math.toIntExact(grid.x()), (int) Math.min(grid.y(), 65535), Math.toIntExact(grid.z())),
                    Dim3.of(grid.threads()),
                    Math.toIntExact(shared),
                    args);
        }
    }

    /**
     * Makes the position-dependent kernels launched next for the step's sequence {@code seq} read {@code start} from its
     * slot of the step buffer; returns that slot's device address (their kernel parameter {@code pos}).
     */
    long position(int seq, int start) {
        if (seq < 0 || seq >= queue.slots())
            throw new GossException("cuda: a step of more than " + queue.slots() + " sequences");
        queue.position(seq, start);
        return queue.stepAddress() + 4L * seq;
    }

    /** A block size above what {@code k} can launch on this device (registers) is the knob's error, not a launch failure. */
    static void checkBlock(CudaKernel k, io.gossgpu.backend.Knob knob, int block) {
        int max = k.maxThreadsPerBlock();
        if (block > max)
            throw knob.invalid(Integer.toString(block), max, "kernel " + k.name() + "'s limit on this device");
    }
}
