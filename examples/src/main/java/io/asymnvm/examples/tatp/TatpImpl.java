package io.asymnvm.examples.tatp;

import io.asymnvm.frontend.AsymNvm;
import io.asymnvm.structures.PersistentBTree;
import io.asymnvm.structures.PersistentHashMap;
import io.asymnvm.structures.codec.Codecs;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * {@link Tatp} on five named structures: Subscriber, Access_Info and Special_Facility in hash maps keyed by
 * {@link TatpKeys}, the {@code sub_nbr -> s_id} index in a hash map, and Call_Forwarding in a B+tree (the rows of
 * one subscriber and facility are adjacent, so GET_NEW_DESTINATION is one short range scan). Deterministic; every
 * check runs before the first write, so a rollback leaves everything as it was.
 */
public final class TatpImpl implements Tatp {
    /** Names of the structures, in the frontend's catalog. */
    public static final String SUBSCRIBER = "tatp-subscriber";
    public static final String SUB_NBR_INDEX = "tatp-sub-nbr";
    public static final String ACCESS_INFO = "tatp-access-info";
    public static final String SPECIAL_FACILITY = "tatp-special-facility";
    public static final String CALL_FORWARDING = "tatp-call-forwarding";

    private final PersistentHashMap<Long, SubscriberRow> subscribers;
    private final PersistentHashMap<String, Long> subNbrIndex;
    private final PersistentHashMap<Long, AccessInfoRow> accessInfo;
    private final PersistentHashMap<Long, SpecialFacilityRow> specialFacilities;
    private final PersistentBTree<Long, CallForwardingRow> callForwardings;

    public TatpImpl(AsymNvm nvm) {
        Objects.requireNonNull(nvm, "nvm");
        subscribers = PersistentHashMap.open(nvm, SUBSCRIBER, Codecs.LONG, TatpCodecs.SUBSCRIBER);
        subNbrIndex = PersistentHashMap.open(nvm, SUB_NBR_INDEX, Codecs.STRING, Codecs.LONG);
        accessInfo = PersistentHashMap.open(nvm, ACCESS_INFO, Codecs.LONG, TatpCodecs.ACCESS_INFO);
        specialFacilities = PersistentHashMap.open(nvm, SPECIAL_FACILITY, Codecs.LONG, TatpCodecs.SPECIAL_FACILITY);
        callForwardings = PersistentBTree.open(nvm, CALL_FORWARDING, Codecs.LONG, TatpCodecs.CALL_FORWARDING);
    }

    @Override
    public int populate(long first, int count, long seed) {
        if (count < 0) {
            throw new IllegalArgumentException("subscriber count must not be negative: " + count);
        }
        TatpKeys.requireSubscriber(first);
        TatpKeys.requireSubscriber(first + Math.max(0, count - 1));
        int rows = 0;
        for (long sId = first; sId < first + count; sId++) {
            if (subscribers.containsKey(sId)) {
                continue;
            }
            TatpPopulation p = TatpPopulation.of(sId, seed);
            subscribers.put(sId, p.subscriber());
            subNbrIndex.put(p.subscriber().subNbr(), sId);
            p.accessInfo().forEach(e -> accessInfo.put(e.getKey(), e.getValue()));
            p.specialFacilities().forEach(e -> specialFacilities.put(e.getKey(), e.getValue()));
            p.callForwardings().forEach(e -> callForwardings.put(e.getKey(), e.getValue()));
            rows += p.rows();
        }
        return rows;
    }

    @Override
    public SubscriberRow getSubscriberData(long sId) {
        return subscribers.get(TatpKeys.requireSubscriber(sId));
    }

    @Override
    public List<String> getNewDestination(long sId, int sfType, int startTime, int endTime) {
        TatpKeys.requireStartTime(startTime);
        List<String> numbers = new ArrayList<>();
        SpecialFacilityRow sf = specialFacilities.get(TatpKeys.specialFacility(sId, sfType));
        if (sf == null || !sf.active()) {
            return numbers;
        }
        long from = TatpKeys.callForwarding(sId, sfType, 0);
        long to = TatpKeys.callForwarding(sId, sfType, startTime);
        for (Map.Entry<Long, CallForwardingRow> e : callForwardings.range(from, true, to, true, false, 3)) {
            if (endTime < e.getValue().endTime()) {
                numbers.add(e.getValue().numberx());
            }
        }
        return numbers;
    }

    @Override
    public AccessInfoRow getAccessData(long sId, int aiType) {
        return accessInfo.get(TatpKeys.accessInfo(sId, aiType));
    }

    @Override
    public void updateSubscriberData(long sId, int bit1, int sfType, int dataA) {
        if (bit1 != 0 && bit1 != 1) {
            throw new IllegalArgumentException("bit_1 not 0 or 1: " + bit1);
        }
        long sfKey = TatpKeys.specialFacility(sId, sfType);
        SubscriberRow subscriber = subscribers.get(sId);
        SpecialFacilityRow sf = specialFacilities.get(sfKey);
        if (subscriber == null || sf == null) {
            throw new TatpRollbackException("no " + (subscriber == null ? "subscriber " + sId
                    : "special facility " + sfType + " of subscriber " + sId));
        }
        subscribers.put(sId, subscriber.withBit1(bit1));
        specialFacilities.put(sfKey, sf.withDataA(dataA));
    }

    @Override
    public void updateLocation(String subNbr, int vlrLocation) {
        long sId = subscriberOf(subNbr);
        subscribers.put(sId, subscribers.get(sId).withVlrLocation(vlrLocation));
    }

    @Override
    public void insertCallForwarding(String subNbr, int sfType, int startTime, int endTime, String numberx) {
        Objects.requireNonNull(numberx, "numberx");
        long sId = subscriberOf(subNbr);
        long key = TatpKeys.callForwarding(sId, sfType, startTime);
        if (!specialFacilities.containsKey(TatpKeys.specialFacility(sId, sfType))) {
            throw new TatpRollbackException("no special facility " + sfType + " of subscriber " + sId);
        }
        if (callForwardings.putIfAbsent(key, new CallForwardingRow(endTime, numberx)) != null) {
            throw new TatpRollbackException("call forwarding " + sfType + "/" + startTime + " of subscriber " + sId
                    + " exists");
        }
    }

    @Override
    public void deleteCallForwarding(String subNbr, int sfType, int startTime) {
        long sId = subscriberOf(subNbr);
        if (callForwardings.remove(TatpKeys.callForwarding(sId, sfType, startTime)) == null) {
            throw new TatpRollbackException("no call forwarding " + sfType + "/" + startTime + " of subscriber "
                    + sId);
        }
    }

    @Override
    public SpecialFacilityRow specialFacility(long sId, int sfType) {
        return specialFacilities.get(TatpKeys.specialFacility(sId, sfType));
    }

    @Override
    public CallForwardingRow callForwarding(long sId, int sfType, int startTime) {
        return callForwardings.get(TatpKeys.callForwarding(sId, sfType, startTime));
    }

    @Override
    public TatpCounts counts() {
        return new TatpCounts(subscribers.size(), subNbrIndex.size(), accessInfo.size(), specialFacilities.size(),
                callForwardings.size());
    }

    private long subscriberOf(String subNbr) {
        Long sId = subNbrIndex.get(Objects.requireNonNull(subNbr, "subNbr"));
        if (sId == null) {
            throw new TatpRollbackException("no subscriber numbered " + subNbr);
        }
        return sId;
    }
}
