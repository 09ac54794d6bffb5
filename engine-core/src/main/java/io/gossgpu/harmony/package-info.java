/**
 * OpenAI's Harmony chat format for gpt-oss.
 *
 * <ul>
 *   <li>{@link io.gossgpu.harmony.Message}, {@link io.gossgpu.harmony.SystemContent},
 *       {@link io.gossgpu.harmony.DeveloperContent}, {@link io.gossgpu.harmony.ToolDescription}: the conversation.</li>
 *   <li>{@link io.gossgpu.harmony.HarmonyRenderer}: conversation → prompt tokens (ending in {@code <|start|>assistant}).</li>
 *   <li>{@link io.gossgpu.harmony.HarmonyStreamParser}: generated tokens → messages, content deltas, tool calls,
 *       end of turn; stop generating on {@link io.gossgpu.harmony.HarmonyStreamParser#STOP_TOKENS}.</li>
 * </ul>
 */
package io.gossgpu.harmony;
