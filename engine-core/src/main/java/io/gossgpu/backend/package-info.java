/**
 * The Backend SPI: how the engine talks to a compute device.
 *
 * <ul>
 *   <li>{@link io.gossgpu.backend.BackendProvider} — found by {@link java.util.ServiceLoader}; name, priority,
 *       {@link io.gossgpu.backend.Availability} (one-line reason when absent), {@code create(options)} with an immutable
 *       {@link io.gossgpu.backend.BackendOptions} (its {@link io.gossgpu.backend.Knob}s and settings, read from the
 *       environment only at the edge). {@link io.gossgpu.backend.Backends#open(String, BackendOptions)} picks one by name
 *       or {@code auto}.</li>
 *   <li>{@link io.gossgpu.backend.Backend} — owns device memory: {@link io.gossgpu.backend.DeviceTensor}
 *       (F32 rows × cols activations), {@link io.gossgpu.backend.DeviceRouting} (router output),
 *       {@link io.gossgpu.backend.KvCache} (laid out by {@link io.gossgpu.backend.KvCacheSpec}),
 *       {@link io.gossgpu.backend.LoadedWeights} (uploaded once); and runs the ops: embed, rmsNorm, linear,
 *       qkvRope, attention (also stores K/V), router, moe, add, logits, argmax, sample
 *       ({@link io.gossgpu.backend.TemperatureDraw}), addRmsNorm. Each op's Javadoc is its contract; a forward pass is
 *       one step ({@code beginStep} … {@code endStep}). {@code supports(}{@link io.gossgpu.backend.BackendOp}{@code )}
 *       says which ops it runs itself; {@link io.gossgpu.backend.DeclinedOps} runs a declined one another way (how to
 *       add an op: {@link io.gossgpu.backend.Backend}'s class comment).</li>
 *   <li>{@link io.gossgpu.backend.DeviceWeights}, {@link io.gossgpu.backend.DeviceKvCache} — a model's tensors and a
 *       cache as a backend's handles; the GPU backends' shared layer is {@link io.gossgpu.device}.</li>
 *   <li>{@link io.gossgpu.backend.Rope} — YaRN frequencies and a cos/sin table every backend should share.</li>
 *   <li>{@link io.gossgpu.backend.ForwardingBackend} — a delegating base for tracing or fault injection.</li>
 * </ul>
 *
 * <p>Notes for implementers: attention reads positions {@code < start} from the cache and the batch's own
 * rows from its {@code k}/{@code v} inputs, and stores the batch only after attending — that is why a
 * sliding layer's ring of {@code window} slots suffices for any prefill length. Router ties go to the lower
 * expert index; argmax ties to the lower token id. Compute RoPE angles in double (or use the table).
 * Pass the conformance kit ({@code io.gossgpu.conformance.BackendConformanceKit} in engine-core's test-jar).
 */
package io.gossgpu.backend;
