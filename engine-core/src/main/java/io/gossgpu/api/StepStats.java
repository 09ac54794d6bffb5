package io.gossgpu.api;

/**
 * The forward passes an {@link Engine} ran so far ({@link Engine#stepStats()}): {@code steps} passes, holding
 * {@code rows} token rows (decode tokens and prompt chunks) of {@code sequences} chats in all; rows per step above 1
 * means chats were batched.
 */
public record StepStats(long steps, long rows, long sequences) {}
