package io.asymnvm.examples.tatp;

/** A Call_Forwarding row (key: {@code s_id, sf_type, start_time}): {@code end_time} and {@code numberx} (15 digits). */
public record CallForwardingRow(int endTime, String numberx) {}
