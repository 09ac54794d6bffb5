package io.gossgpu.cuda;

import static io.gossgpu.cuda.bindings.CudaException.check;

import io.gossgpu.cuda.bindings.Cuda;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/** One kernel of a {@link CudaModule}, and its launch ({@code cuLaunchKernel}). */
public final class CudaKernel implements io.gossgpu.device.DeviceKernel {

    /** Grid or block dimensions. */
    public record Dim3(int x, int y, int z) {
        public static Dim3 of(int x) {
            return new Dim3(x, 1, 1);
        }

        public static Dim3 of(int x, int y) {
            return new Dim3(x, y, 1);
        }

        @Override
        public String toString() {
            return "(" + x + ", " + y + ", " + z + ")";
        }
    }

    private final CudaModule module;
    private final String name;
    private final MemorySegment function;
    /** What the launcher declared (its launches are checked against it), or null. */
    private final CudaEntry entry;

    CudaKernel(CudaModule module, String name, MemorySegment function, CudaEntry entry) {
        this.module = module;
        this.name = name;
        this.function = function;
        this.entry = entry;
    }

    @Override
    public String name() {
        return name;
    }

    public MemorySegment handle() {
        return function;
    }

    /** Queues the kernel on {@code stream}. Launch errors are reported here; errors while it runs at the next synchronisation. */
    public void launch(CudaStream stream, Dim3 grid, Dim3 block, int sharedBytes, KernelArgs args) {
        validate(grid, block, sharedBytes);
        if (entry != null) entry.check(args);
        module.context().makeCurrent();
        check(
                "cuLaunchKernel(" + name + ")",
                Cuda.cuLaunchKernel(
                        function,
                        grid.x(),
                        grid.y(),
                        grid.z(),
                        block.x(),
                        block.y(),
                        block.z(),
                        sharedBytes,
                        stream.handle(),
                        args.kernelParams(),
                        MemorySegment.NULL));
    }

    /** 1-D launch on the context's stream without dynamic shared memory. */
    public void launch(int gridX, int blockX, KernelArgs args) {
        launch(module.context().stream(), Dim3.of(gridX), Dim3.of(blockX), 0, args);
    }

    /** 1-D launch on the context's stream with boxed arguments (see {@link KernelArgs#add}); allocates, so not for hot loops. */
    public void launch(int gridX, int blockX, Object... args) {
        launch(gridX, blockX, new KernelArgs().add(args));
    }

    /** {@code cuFuncGetAttribute}, e.g. {@link Cuda#CU_FUNC_ATTRIBUTE_NUM_REGS}. */
    public int attribute(int attribute) {
        module.context().makeCurrent();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(Cuda.C_INT);
            check("cuFuncGetAttribute(" + name + ")", Cuda.cuFuncGetAttribute(out, attribute, function));
            return out.get(Cuda.C_INT, 0);
        }
    }

    @Override
    public int maxThreads() {
        return maxThreadsPerBlock();
    }

    /** Largest block this kernel can be launched with (registers permitting). */
    public int maxThreadsPerBlock() {
        return attribute(Cuda.CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    }

    /** Allows more than 48 KiB of dynamic shared memory (up to the device's opt-in maximum). */
    public void setMaxDynamicSharedBytes(int bytes) {
        module.context().makeCurrent();
        check(
                "cuFuncSetAttribute(" + name + ")",
                Cuda.cuFuncSetAttribute(function, Cuda.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes));
    }

    private void validate(Dim3 grid, Dim3 block, int sharedBytes) {
        long threads = (long) block.x() * block.y() * block.z();
        if (grid.x() < 1 || grid.y() < 1 || grid.z() < 1 || grid.y() > 65535 || grid.z() > 65535) {
            throw new IllegalArgumentException(
                    "CUDA kernel " + name + ": grid " + grid + " is invalid (x in 1..2147483647, y and z in 1..65535)");
        }
        if (block.x() < 1 || block.y() < 1 || block.z() < 1 || block.z() > 64 || threads > 1024) {
            throw new IllegalArgumentException("CUDA kernel " + name + ": block " + block
                    + " is invalid (each dimension at least 1, z at most 64, at most 1024 threads in all)");
        }
        if (sharedBytes < 0) {
            throw new IllegalArgumentException("CUDA kernel " + name + ": negative shared memory size " + sharedBytes);
        }
    }
}
