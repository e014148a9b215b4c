package io.asymnvm.examples.tatp;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * The rows of one subscriber as the TATP specification populates them, a pure function of the subscriber id and a
 * seed (so the populating transaction is deterministic, and tests regenerate what it wrote): 1..4 Access_Info rows
 * of distinct {@code ai_type}, 1..4 Special_Facility rows of distinct {@code sf_type} (85% active), and for each
 * of them 0..3 Call_Forwarding rows of distinct start time (0, 8, 16) ending 1..8 hours after it starts.
 */
public record TatpPopulation(long sId, SubscriberRow subscriber, List<Map.Entry<Long, AccessInfoRow>> accessInfo,
                             List<Map.Entry<Long, SpecialFacilityRow>> specialFacilities,
                             List<Map.Entry<Long, CallForwardingRow>> callForwardings) {

    /** Generates the rows of subscriber {@code sId}. */
    public static TatpPopulation of(long sId, long seed) {
        SplittableRandom r = new SplittableRandom(seed ^ (TatpKeys.requireSubscriber(sId) * 0x9E3779B97F4A7C15L));
        int bits = r.nextInt(1 << 10);
        long hex = r.nextLong(1L << 40);
        byte[] byte2 = new byte[10];
        r.nextBytes(byte2);
        SubscriberRow subscriber = new SubscriberRow(TatpKeys.subNbr(sId), bits, hex, byte2, r.nextInt(),
                r.nextInt());
        List<Map.Entry<Long, AccessInfoRow>> ai = new ArrayList<>();
        for (int type : distinctTypes(r)) {
            ai.add(Map.entry(TatpKeys.accessInfo(sId, type), new AccessInfoRow(r.nextInt(256), r.nextInt(256),
                    letters(r, 3), letters(r, 5))));
        }
        List<Map.Entry<Long, SpecialFacilityRow>> sf = new ArrayList<>();
        List<Map.Entry<Long, CallForwardingRow>> cf = new ArrayList<>();
        for (int type : distinctTypes(r)) {
            sf.add(Map.entry(TatpKeys.specialFacility(sId, type), new SpecialFacilityRow(r.nextInt(100) < 85,
                    r.nextInt(256), r.nextInt(256), letters(r, 5))));
            int forwardings = r.nextInt(4);
            int[] starts = TatpKeys.START_TIMES.clone();
            shuffle(starts, r);
            for (int i = 0; i < forwardings; i++) {
                int start = starts[i];
                cf.add(Map.entry(TatpKeys.callForwarding(sId, type, start),
                        new CallForwardingRow(start + 1 + r.nextInt(8), digits(r, 15))));
            }
        }
        return new TatpPopulation(sId, subscriber, List.copyOf(ai), List.copyOf(sf), List.copyOf(cf));
    }

    /** Rows of every table for this subscriber (the index entry included). */
    public int rows() {
        return 2 + accessInfo.size() + specialFacilities.size() + callForwardings.size();
    }

    /** 1..4 distinct types among 1..4, in random order. */
    private static int[] distinctTypes(SplittableRandom r) {
        int[] types = {1, 2, 3, 4};
        shuffle(types, r);
        return java.util.Arrays.copyOf(types, 1 + r.nextInt(4));
    }

    private static void shuffle(int[] a, SplittableRandom r) {
        for (int i = a.length - 1; i > 0; i--) {
            int j = r.nextInt(i + 1);
            int t = a[i];
            a[i] = a[j];
            a[j] = t;
        }
    }

    static String letters(SplittableRandom r, int n) {
        char[] c = new char[n];
        for (int i = 0; i < n; i++) {
            c[i] = (char) ('A' + r.nextInt(26));
        }
        return new String(c);
    }

    static String digits(SplittableRandom r, int n) {
        char[] c = new char[n];
        for (int i = 0; i < n; i++) {
            c[i] = (char) ('0' + r.nextInt(10));
        }
        return new String(c);
    }
}
