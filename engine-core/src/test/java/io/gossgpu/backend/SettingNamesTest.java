package io.gossgpu.backend;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/** A misspelled knob was ignored without a word; now it is named with the nearest known name. */
class SettingNamesTest {
    static final List<String> KNOWN = List.of(
            "GOSS_OPENCL_DENSE_WG", "GOSS_OPENCL_DENSE_TILE", "GOSS_OPENCL_DEVICE", "GOSS_CPU_THREADS", "GOSS_MODEL");

    @Test
    void anUnknownNameGetsTheNearestKnownOne() {
        assertEquals(
                List.of(
                        "unknown setting GOSS_OPENCL_DENSE_WGG (did you mean GOSS_OPENCL_DENSE_WG?)",
                        "unknown setting GOSS_OPENLC_DEVICE (did you mean GOSS_OPENCL_DEVICE?)",
                        "unknown setting GOSS_WARP_SPEED (no known setting has a similar name; 'goss-gpu info --backends' lists the knobs)"),
                SettingNames.unknown(
                        List.of("GOSS_OPENCL_DENSE_WGG", "GOSS_CPU_THREADS", "GOSS_OPENLC_DEVICE", "GOSS_WARP_SPEED"),
                        KNOWN));
        assertEquals(List.of(), SettingNames.unknown(KNOWN, KNOWN));
    }

    @Test
    void distanceCountsEditsAndSwapsOfNeighbours() {
        assertEquals(0, SettingNames.distance("GOSS_X", "GOSS_X"));
        assertEquals(1, SettingNames.distance("GOSS_OPENCL_DENSE_WGG", "GOSS_OPENCL_DENSE_WG"));
        assertEquals(1, SettingNames.distance("GOSS_OPENLC_DEVICE", "GOSS_OPENCL_DEVICE"));
        assertEquals(2, SettingNames.distance("GOSS_CPU_THREDS_", "GOSS_CPU_THREADS"));
        assertEquals(3, SettingNames.distance("kitten", "sitting"));
    }

    @Test
    void theEnvironmentsGossNamesAndPropertiesAreCheckedAsWritten() {
        Properties props = new Properties();
        props.setProperty("goss.opencl.dense.wgg", "32");
        props.setProperty("user.home", "/x");
        var names = SettingNames.inEnvironment(Map.of("GOSS_MODLE", "/m", "HOME", "/x"), props);
        assertEquals(Map.of("GOSS_MODLE", "GOSS_MODLE", "-Dgoss.opencl.dense.wgg", "GOSS_OPENCL_DENSE_WGG"), names);
        assertEquals(
                List.of(
                        "unknown setting -Dgoss.opencl.dense.wgg (did you mean GOSS_OPENCL_DENSE_WG?)",
                        "unknown setting GOSS_MODLE (did you mean GOSS_MODEL?)"),
                SettingNames.unknown(names, KNOWN));
    }
}
