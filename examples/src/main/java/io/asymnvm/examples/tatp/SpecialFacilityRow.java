package io.asymnvm.examples.tatp;

/**
 * A Special_Facility row (key: {@code s_id, sf_type}): {@code is_active}, {@code error_cntrl}, {@code data_a},
 * {@code data_b}.
 */
public record SpecialFacilityRow(boolean active, int errorCntrl, int dataA, String dataB) {

    SpecialFacilityRow withDataA(int value) {
        return new SpecialFacilityRow(active, errorCntrl, value, dataB);
    }
}
