package io.asymnvm.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

@Timeout(10)
class ClusterConfigTest {
    private static final UUID IMAGE = UUID.fromString("3f0c6b7e-0000-4000-8000-00000000abcd");

    static ClusterConfig sample() {
        return new ClusterConfig(7, IMAGE, new NodeEndpoint("b0", "10.0.0.1", 7000), List.of(
                new MirrorInfo(new NodeEndpoint("m1", "10.0.0.2", 7001), ReplicationMode.SYNC, MirrorState.IN_SYNC),
                new MirrorInfo(new NodeEndpoint("m2", "host-2.example", 7002), ReplicationMode.ASYNC,
                        MirrorState.CATCHING_UP)));
    }

    @Test
    void shouldRoundTripThroughJson() {
        ClusterConfig c = sample();
        ClusterConfig back = ClusterConfig.fromJson(c.toJson());
        assertEquals(c, back);
        assertEquals(7, back.epoch());
        assertEquals(ReplicationMode.ASYNC, back.mirror("m2").orElseThrow().mode());
        assertEquals(MirrorState.CATCHING_UP, back.mirror("m2").orElseThrow().state());
        assertEquals("10.0.0.1:7000", back.backend().address());
    }

    @Test
    void shouldPromoteAnInSyncMirror() {
        ClusterConfig next = sample().promote("m1");
        assertEquals(8, next.epoch());
        assertTrue(next.isBackend("m1"));
        assertEquals(List.of("m2"), next.mirrors().stream().map(MirrorInfo::id).toList());
        assertEquals(IMAGE, next.imageId());
    }

    @Test
    void promotionShouldSetTheOtherInSyncMirrorsCatchingUp() {
        ClusterConfig both = sample().withMirrorState("m2", MirrorState.IN_SYNC);
        ClusterConfig next = both.promote("m1");
        // m2 followed the old backend: it is promotable again only once the new backend's shipper has it in sync
        assertEquals(MirrorState.CATCHING_UP, next.mirror("m2").orElseThrow().state());
        assertEquals(both.mirror("m2").orElseThrow().node(), next.mirror("m2").orElseThrow().node());
        assertEquals(both.epoch() + 1, next.epoch());
    }

    @Test
    void shouldRefuseToPromoteACatchingUpMirror() {
        AsymNvmException e = assertThrows(AsymNvmException.class, () -> sample().promote("m2"));
        assertEquals(ErrorCode.REPLICA_BEHIND, e.errorCode());
        assertTrue(e.getMessage().contains("m2") && e.getMessage().contains("CATCHING_UP"), e.getMessage());
    }

    @Test
    void shouldChangeMirrorStateAndDropMirrorsWithoutTouchingTheEpoch() {
        ClusterConfig c = sample().withMirrorState("m2", MirrorState.IN_SYNC);
        assertEquals(7, c.epoch());
        assertTrue(c.mirror("m2").orElseThrow().inSync());
        ClusterConfig d = c.dropMirror("m1");
        assertFalse(d.mirror("m1").isPresent());
        assertEquals(7, d.epoch());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> d.dropMirror("m9"));
        assertTrue(e.getMessage().contains("'m9'"), e.getMessage());
    }

    @Test
    void shouldRefuseADuplicateNodeId() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> sample().withMirror(
                new MirrorInfo(new NodeEndpoint("b0", "h", 1), ReplicationMode.SYNC, MirrorState.CATCHING_UP)));
        assertTrue(e.getMessage().contains("mirrors[2].id") && e.getMessage().contains("'b0'"), e.getMessage());
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "{\"format\":1,\"epoch\":0,\"image\":\"3f0c6b7e-0000-4000-8000-00000000abcd\",\"backend\":{\"id\":\"b0\",\"host\":\"h\",\"port\":1},\"mirrors\":[]}"
                + "| 'epoch' must be positive: 0",
        "{\"format\":1,\"epoch\":2,\"image\":\"not-a-uuid\",\"backend\":{\"id\":\"b0\",\"host\":\"h\",\"port\":1},\"mirrors\":[]}"
                + "| 'image' is not a UUID: 'not-a-uuid'",
        "{\"format\":1,\"epoch\":2,\"image\":\"3f0c6b7e-0000-4000-8000-00000000abcd\",\"backend\":{\"id\":\"b0\",\"host\":\"h\",\"port\":70000},\"mirrors\":[]}"
                + "| backend.port out of range [1, 65535]: 70000",
        "{\"format\":1,\"epoch\":2,\"image\":\"3f0c6b7e-0000-4000-8000-00000000abcd\",\"backend\":{\"id\":\"b/0\",\"host\":\"h\",\"port\":1},\"mirrors\":[]}"
                + "| backend.id must match",
        "{\"format\":1,\"epoch\":2,\"image\":\"3f0c6b7e-0000-4000-8000-00000000abcd\",\"backend\":{\"id\":\"b0\",\"host\":\"h\",\"port\":1},\"mirrors\":[{\"id\":\"m1\",\"host\":\"h\",\"port\":2,\"mode\":\"SEMI\",\"state\":\"IN_SYNC\"}]}"
                + "| 'mirrors[0].mode' must be one of [SYNC, ASYNC]: 'SEMI'",
        "{\"format\":1,\"epoch\":2,\"image\":\"3f0c6b7e-0000-4000-8000-00000000abcd\",\"backend\":{\"id\":\"b0\",\"host\":\"h\",\"port\":1},\"mirrors\":[{\"id\":\"m1\",\"host\":\"h\",\"port\":2,\"mode\":\"SYNC\"}]}"
                + "| 'mirrors[0].state' is missing",
        "{\"format\":1,\"epoch\":\"2\",\"image\":\"3f0c6b7e-0000-4000-8000-00000000abcd\",\"backend\":{\"id\":\"b0\",\"host\":\"h\",\"port\":1},\"mirrors\":[]}"
                + "| 'epoch' is not an integer: \"2\"",
        "{\"format\":1,\"epoch\":2,\"image\":\"3f0c6b7e-0000-4000-8000-00000000abcd\",\"backend\":{\"id\":\"b0\",\"host\":\"h\",\"port\":1},\"mirrors\":[],\"leader\":1}"
                + "| unknown field 'leader'",
        "{\"format\":1,\"epoch\":2,\"image\":\"3f0c6b7e-0000-4000-8000-00000000abcd\",\"backend\":{\"id\":\"b0\",\"host\":\"h\",\"port\":1},\"mirrors\":[{\"id\":\"b0\",\"host\":\"h\",\"port\":2,\"mode\":\"SYNC\",\"state\":\"IN_SYNC\"}]}"
                + "| mirrors[0].id repeats a node id",
        "[1,2]| not a JSON object",
        "{\"epoch\":| not JSON",
    })
    void shouldRefuseBadRecordsNamingFieldAndValue(String json, String expected) {
        AsymNvmException e = assertThrows(AsymNvmException.class,
                () -> ClusterConfig.fromJson(json.getBytes(StandardCharsets.UTF_8)));
        assertEquals(ErrorCode.CORRUPT_RECORD, e.errorCode());
        assertTrue(e.getMessage().contains(expected.strip()), e.getMessage());
    }

    @Test
    void shouldRefuseAnotherFormatNamingBoth() {
        String json = new String(sample().toJson(), StandardCharsets.UTF_8).replace("\"format\":1", "\"format\":2");
        AsymNvmException e = assertThrows(AsymNvmException.class,
                () -> ClusterConfig.fromJson(json.getBytes(StandardCharsets.UTF_8)));
        assertEquals(ErrorCode.FORMAT_VERSION_MISMATCH, e.errorCode());
        assertTrue(e.getMessage().contains("format 2") && e.getMessage().contains("format 1"), e.getMessage());
    }

    @Test
    void shouldParseEndpoints() {
        assertEquals(new NodeEndpoint("m1", "127.0.0.1", 7001), NodeEndpoint.parse("m1@127.0.0.1:7001"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> NodeEndpoint.parse("m1:7001"));
        assertTrue(e.getMessage().contains("'m1:7001'"), e.getMessage());
    }
}
