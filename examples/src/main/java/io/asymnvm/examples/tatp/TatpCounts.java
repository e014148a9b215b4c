package io.asymnvm.examples.tatp;

/** Rows per table, and entries of the {@code sub_nbr} index. */
public record TatpCounts(long subscribers, long subNbrIndex, long accessInfo, long specialFacilities,
                         long callForwardings) {}
