/**
 * The device layer the GPU backends share (buffers, kernel launches, the op pipelines) and the expert placement that
 * splits a model between a GPU and the cpu backend. Only the GPU backends build on it.
 */
@SuppressWarnings("module") // the qualified exports name modules built after this one
module io.gossgpu.device {
    requires transitive io.gossgpu.core;

    exports io.gossgpu.device to
            io.gossgpu.cuda,
            io.gossgpu.opencl,
            io.gossgpu.metal;
}
