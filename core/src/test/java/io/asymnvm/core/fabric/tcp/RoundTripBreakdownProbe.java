package io.asymnvm.core.fabric.tcp;

import io.asymnvm.core.fabric.Access;
import io.asymnvm.core.fabric.ControlHandler;
import io.asymnvm.core.fabric.EmulatedNic;
import io.asymnvm.core.fabric.FabricConnection;
import io.asymnvm.core.fabric.NicSession;
import io.asymnvm.core.fabric.PersistenceDomain;
import io.asymnvm.core.fabric.WaitPolicy;
import io.asymnvm.core.layout.FrameLayout;
import io.asymnvm.core.region.MappedRegion;
import io.asymnvm.core.fabric.RegionTable;
import io.netty.channel.epoll.Epoll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Where a tcp round trip's time goes (issue 8, goal 5): one emulated NIC on a tmpfs-mapped region, four server and
 * client pairs (NIO and epoll with loops blocking, epoll with the backend's loops polling 50 µs, and with the client's
 * loop polling too), measured in alternating blocks in one JVM so that every configuration sees the same load: an
 * awaited 8-byte READ (the bare round trip: no persist) and a 64-byte WRITE followed by an awaited FLUSH (the raw
 * persisted write of {@code bench commit}), each waited with PARK and with SPIN. Prints p50s; asserts only that every
 * operation completed on the transport asked for. A measurement, not part of the default run:
 * {@code mvn -pl core test -Dtest=RoundTripBreakdownProbe -Dsurefire.failIfNoSpecifiedTests=false}.
 */
@Tag("slow")
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class RoundTripBreakdownProbe {
    @Test
    void printsTheRoundTripOfEachTransportAndLoopSetting() throws Exception {
        Path shm = Path.of("/dev/shm");
        Path dir = Files.isWritable(shm) ? Files.createTempDirectory(shm, "asymnvm-rtt-probe")
                : Files.createTempDirectory("asymnvm-rtt-probe");
        MappedRegion backing = MappedRegion.create(dir.resolve("img"), 1 << 20, MappedRegion.MapMode.FILE);
        RegionTable table = new RegionTable();
        table.register(7, backing, 0, 1 << 20, null);
        ControlHandler h = new ControlHandler() {
            @Override
            public byte[] handle(NicSession s, byte[] r) {
                s.bind(1, 1);
                s.grant(7, Access.READ_WRITE);
                return r.clone();
            }

            @Override
            public void sessionClosed(NicSession s) {
            }
        };
        EmulatedNic nic = new EmulatedNic(table, h, PersistenceDomain.ADR);
        String[] names = {"nio/block", "epoll/block", "epoll/srv50", "epoll/srv50+cli50"};
        assumeTrue(Epoll.isAvailable(), "native epoll does not load here");
        TcpTransport[] ts = {TcpTransport.of(TcpTransport.Kind.NIO, 0, 0),
                TcpTransport.of(TcpTransport.Kind.EPOLL, 0, 0), TcpTransport.of(TcpTransport.Kind.EPOLL, 50, 0),
                TcpTransport.of(TcpTransport.Kind.EPOLL, 50, 50)};
        boolean[] spinClient = {false, false, false, true};
        int n = ts.length;
        TcpNicServer[] servers = new TcpNicServer[n];
        TcpFabric[] fabrics = new TcpFabric[n];
        FabricConnection[] conns = new FabricConnection[n];
        for (int i = 0; i < n; i++) {
            servers[i] = new TcpNicServer(nic, new InetSocketAddress("127.0.0.1", 0), TcpServerLimits.DEFAULTS
                    .resolve(FrameLayout.MAX_FRAME_LENGTH, TcpServerLimits.UNATTACHED_CONNECTION_ALLOWANCE), null,
                    ts[i]).start();
            fabrics[i] = new TcpFabric("127.0.0.1", servers[i].port(), null, ts[i], spinClient[i]);
            conns[i] = fabrics[i].connect();
            conns[i].call(new byte[8]).await();
        }
        WaitPolicy[] pols = {WaitPolicy.park(), WaitPolicy.spin()};
        int block = 100, rounds = 30;
        long[][][] read = new long[n][2][block * rounds];
        long[][][] flush = new long[n][2][block * rounds];
        byte[] data = new byte[64];
        for (int r = 0; r < rounds + 3; r++) {
            for (int i = 0; i < n; i++) {
                for (int p = 0; p < 2; p++) {
                    for (int k = 0; k < block; k++) {
                        long t0 = System.nanoTime();
                        conns[i].read(7, 0, 8).await(pols[p]);
                        long t1 = System.nanoTime();
                        conns[i].write(7, 64, data, 0, 64);
                        conns[i].flush(0, false).await(pols[p]);
                        long t2 = System.nanoTime();
                        if (r >= 3) { // three unrecorded rounds of warm-up
                            read[i][p][(r - 3) * block + k] = t1 - t0;
                            flush[i][p][(r - 3) * block + k] = t2 - t1;
                        }
                    }
                }
            }
        }
        System.out.printf("LOAD %s%n", Files.readString(Path.of("/proc/loadavg")).trim());
        for (int i = 0; i < n; i++) {
            for (int p = 0; p < 2; p++) {
                System.out.printf("PROBE %-20s %-5s READ8 p50 %7.1f us  WRITE64+FLUSH p50 %7.1f us%n",
                        names[i], pols[p], med(read[i][p]), med(flush[i][p]));
                assertTrue(Arrays.stream(read[i][p]).allMatch(v -> v > 0), "every READ completed");
            }
        }
        assertEquals("nio", fabrics[0].transport());
        assertEquals("epoll", fabrics[1].transport());
        for (int i = 0; i < n; i++) {
            conns[i].close();
            fabrics[i].close();
            servers[i].close();
        }
        backing.close();
        Files.deleteIfExists(dir.resolve("img"));
        Files.deleteIfExists(dir);
    }

    private static double med(long[] a) {
        long[] c = a.clone();
        Arrays.sort(c);
        return c[c.length / 2] / 1000.0;
    }
}
