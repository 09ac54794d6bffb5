package io.gossgpu.device;

import java.util.function.Function;
import java.util.function.IntToLongFunction;

/**
 * What a GPU backend gives {@link DeviceBackend} to run its ops: the pipelines, built over the backend's
 * {@link Launcher} with its shapes and knobs, how one of its buffers is passed to a kernel, and how host values reach
 * the kernels.
 *
 * @param arg        a buffer as a kernel argument (a CUDA buffer's device address; elsewhere the buffer itself)
 * @param staging    where token ids and positions are put for the kernels launched next
 * @param sampler    temperature sampling on the device; null: SAMPLE is declined and the host samples
 * @param argmaxWork bytes of the argmax kernel's work buffer for a number of rows (zeroed when allocated; the kernel
 *                   leaves it zero); null where the kernel takes none
 * @param <B>        the device's buffer handle
 * @param <A>        the API's buffer argument
 */
public record Pipelines<B, A>(
        Function<B, A> arg,
        HostStaging<A> staging,
        DensePipeline<A> dense,
        SmallOps<A> ops,
        RopeOp<A> rope,
        AttentionPipeline<A> attention,
        MoePipeline<A> moe,
        SamplePipeline<A> sampler,
        IntToLongFunction argmaxWork) {}
