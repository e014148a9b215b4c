package io.asymnvm.examples.tatp;

/**
 * An Access_Info row (key: {@code s_id, ai_type}): {@code data1}, {@code data2} (0..255), {@code data3} (3 letters),
 * {@code data4} (5 letters).
 */
public record AccessInfoRow(int data1, int data2, String data3, String data4) {}
