package io.asymnvm.examples.tatp;

import io.asymnvm.frontend.PersistentTransaction;

import java.util.List;

/**
 * TATP's transactions, each one persistent transaction (use through {@code nvm.transactional(Tatp.class, new
 * TatpImpl(nvm))}). The writing ones that the specification rolls back throw {@link TatpRollbackException} before
 * writing anything; a type outside 1..4 or a start time other than 0, 8, 16 is an {@link IllegalArgumentException}.
 */
public interface Tatp {

    /**
     * Populates subscribers {@code first .. first + count - 1} with their rows ({@link TatpPopulation}, generated
     * from {@code seed}); subscribers that exist already are left as they are. Returns the rows written.
     */
    @PersistentTransaction
    int populate(long first, int count, long seed);

    /** GET_SUBSCRIBER_DATA: the subscriber's row, or null. */
    @PersistentTransaction(readOnly = true)
    SubscriberRow getSubscriberData(long sId);

    /**
     * GET_NEW_DESTINATION: the {@code numberx} of the call forwardings of an active special facility {@code sfType}
     * with {@code cf.start_time <= startTime} and {@code endTime < cf.end_time} (empty when none).
     */
    @PersistentTransaction(readOnly = true)
    List<String> getNewDestination(long sId, int sfType, int startTime, int endTime);

    /** GET_ACCESS_DATA: the access info row, or null. */
    @PersistentTransaction(readOnly = true)
    AccessInfoRow getAccessData(long sId, int aiType);

    /** UPDATE_SUBSCRIBER_DATA: sets {@code bit_1} and the special facility's {@code data_a}; rolls back without it. */
    @PersistentTransaction
    void updateSubscriberData(long sId, int bit1, int sfType, int dataA);

    /** UPDATE_LOCATION: sets the {@code vlr_location} of the subscriber numbered {@code subNbr}. */
    @PersistentTransaction
    void updateLocation(String subNbr, int vlrLocation);

    /**
     * INSERT_CALL_FORWARDING: adds a call forwarding for an existing special facility; rolls back when the
     * facility does not exist or the row does.
     */
    @PersistentTransaction
    void insertCallForwarding(String subNbr, int sfType, int startTime, int endTime, String numberx);

    /** DELETE_CALL_FORWARDING: removes the row; rolls back when there is none. */
    @PersistentTransaction
    void deleteCallForwarding(String subNbr, int sfType, int startTime);

    /** The special facility row, or null (for checks). */
    @PersistentTransaction(readOnly = true)
    SpecialFacilityRow specialFacility(long sId, int sfType);

    /** The call forwarding row, or null (for checks). */
    @PersistentTransaction(readOnly = true)
    CallForwardingRow callForwarding(long sId, int sfType, int startTime);

    /** Rows per table; reads every table's size. */
    @PersistentTransaction(readOnly = true)
    TatpCounts counts();
}
