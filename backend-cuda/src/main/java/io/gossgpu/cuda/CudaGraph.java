package io.gossgpu.cuda;

import static io.gossgpu.cuda.bindings.CudaException.check;

import io.gossgpu.cuda.bindings.Cuda;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * A captured and instantiated CUDA graph: the kernels queued on a stream by {@code work}, replayed
 * with one {@link #launch} (for a decode step: one launch instead of hundreds). Kernel arguments are
 * frozen at capture, so buffers must stay where they were.
 */
public final class CudaGraph implements AutoCloseable {

    private final CudaContext context;
    private MemorySegment graph;
    private MemorySegment exec;

    private CudaGraph(CudaContext context, MemorySegment graph, MemorySegment exec) {
        this.context = context;
        this.graph = graph;
        this.exec = exec;
    }

    /** Captures what {@code work} queues on {@code stream} (thread-local capture mode) and instantiates it. */
    public static CudaGraph capture(CudaStream stream, Runnable work) {
        CudaContext context = stream.context();
        context.makeCurrent();
        check(
                "cuStreamBeginCapture_v2",
                Cuda.cuStreamBeginCapture_v2(stream.handle(), Cuda.CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment pGraph = arena.allocate(Cuda.CUgraph);
            RuntimeException failure = null;
            try {
                work.run();
            } catch (RuntimeException e) {
                failure = e;
            }
            int rc = Cuda.cuStreamEndCapture(stream.handle(), pGraph);
            MemorySegment graph = pGraph.get(Cuda.CUgraph, 0);
            if (failure != null) {
                if (rc == Cuda.CUDA_SUCCESS && !graph.equals(MemorySegment.NULL)) {
                    Cuda.cuGraphDestroy(graph);
                }
                throw failure;
            }
            check("cuStreamEndCapture", rc);
            MemorySegment pExec = arena.allocate(Cuda.CUgraphExec);
            rc = Cuda.cuGraphInstantiateWithFlags(pExec, graph, 0L);
            if (rc != Cuda.CUDA_SUCCESS) {
                Cuda.cuGraphDestroy(graph);
                check("cuGraphInstantiateWithFlags", rc);
            }
            return new CudaGraph(context, graph, pExec.get(Cuda.CUgraphExec, 0));
        }
    }

    /** Queues the whole graph on {@code stream}. */
    public void launch(CudaStream stream) {
        if (exec == null) {
            throw new IllegalStateException("CUDA graph is closed");
        }
        context.makeCurrent();
        check("cuGraphLaunch", Cuda.cuGraphLaunch(exec, stream.handle()));
    }

    @Override
    public void close() {
        if (exec != null) {
            context.makeCurrent();
            MemorySegment e = exec;
            MemorySegment g = graph;
            exec = null;
            graph = null;
            check("cuGraphExecDestroy", Cuda.cuGraphExecDestroy(e));
            check("cuGraphDestroy", Cuda.cuGraphDestroy(g));
        }
    }
}
