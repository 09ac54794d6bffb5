/**
 * The device layer: what every GPU backend shares, written once over the device's buffer handle.
 *
 * <ul>
 *   <li>{@link io.gossgpu.device.DeviceBackend} — implements the {@link io.gossgpu.backend.Backend} SPI's memory,
 *       checks and result pipeline, and runs each op through the pipelines a backend supplies
 *       ({@link io.gossgpu.device.Pipelines}: shapes, knobs, {@link io.gossgpu.device.HostStaging}).</li>
 *   <li>{@link io.gossgpu.device.DeviceDriver} — what a backend's device provides: allocate, zero, release, copy,
 *       submit a step, synchronise, free memory, name.</li>
 *   <li>{@link io.gossgpu.device.BufferTensor}, {@link io.gossgpu.device.BufferRouting} — activations and router
 *       output in device buffers; {@link io.gossgpu.backend.DeviceKvCache} holds the cache.</li>
 *   <li>{@link io.gossgpu.device.ScratchArena} — grow-only scratch buffers by name.</li>
 *   <li>{@link io.gossgpu.device.UploadedWeights} — a model's device buffers and its RoPE table;
 *       {@link io.gossgpu.device.PipelineWeights} — its tensors as the pipelines take them.</li>
 *   <li>{@link io.gossgpu.device.Launcher} — one launch interface, each API's driver implements it; the ops written once
 *       against it: {@link io.gossgpu.device.DensePipeline} (embed, dense), {@link io.gossgpu.device.SmallOps},
 *       {@link io.gossgpu.device.RopeOp}, {@link io.gossgpu.device.AttentionPipeline},
 *       {@link io.gossgpu.device.MoePipeline}, {@link io.gossgpu.device.SamplePipeline}; each API's shapes and
 *       thresholds come in as data.</li>
 *   <li>{@link io.gossgpu.device.PlacementPlanner} — where each layer's MoE experts run when the GPU cannot hold the
 *       whole model ({@link io.gossgpu.device.ExpertPlan}), the two halves each backend loads
 *       ({@link io.gossgpu.device.SplitModel}) and the backend that runs them together
 *       ({@link io.gossgpu.device.SplitBackend}); written once here, so every GPU backend splits alike.</li>
 * </ul>
 */
package io.gossgpu.device;
