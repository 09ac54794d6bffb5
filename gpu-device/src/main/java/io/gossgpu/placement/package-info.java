/**
 * Where each layer's MoE experts run when a GPU cannot hold the whole model: the request ({@link
 * io.gossgpu.backend.ExpertPlacement}: {@code auto}, {@code --cpu-moe}, {@code --n-cpu-moe N}), the per-layer plan it
 * resolves to ({@link io.gossgpu.placement.ExpertPlan}, weighed against the device's free memory by {@link
 * io.gossgpu.placement.PlacementPlanner}), the two halves of the model each backend loads ({@link
 * io.gossgpu.placement.SplitModel}) and the backend that runs them together ({@link io.gossgpu.placement.SplitBackend}).
 * Written once above the device layer, so every GPU backend splits the same way.
 */
package io.gossgpu.placement;
