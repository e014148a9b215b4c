package io.asymnvm.core.fabric.tcp;

import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.Locale;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** {@link TcpTransport}: the native epoll library loads here, the choice resolves, bad values are refused. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class TcpTransportTest {

    private static boolean linuxX8664() {
        String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
        return System.getProperty("os.name", "").toLowerCase(Locale.ROOT).contains("linux")
                && (arch.equals("amd64") || arch.equals("x86_64"));
    }

    @Test
    void nativeEpollLoadsOnLinuxX8664AndAutoPicksIt() {
        assumeTrue(linuxX8664(), "the project ships the linux-x86_64 native library only");
        assertTrue(Epoll.isAvailable(), "native epoll should load: " + Epoll.unavailabilityCause());
        TcpTransport auto = TcpTransport.of(TcpTransport.Kind.AUTO, 0, 0);
        assertEquals("epoll", auto.name());
        assertEquals(EpollServerSocketChannel.class, auto.serverChannel());
        assertEquals("epoll", TcpTransport.parse(null, null, null).name(), "auto is the default");
    }

    @Test
    void nioIsChosenWhenAsked() {
        TcpTransport nio = TcpTransport.parse(" NIO ", "0", "0");
        assertEquals("nio", nio.name());
        assertEquals(NioServerSocketChannel.class, nio.serverChannel());
        assertEquals(0, nio.serverSpinNanos());
    }

    @Test
    void spinWindowsDefaultAndParse() {
        TcpTransport d = TcpTransport.parse("nio", null, " ");
        assertEquals(TimeUnit.MICROSECONDS.toNanos(TcpTransport.DEFAULT_SERVER_SPIN_MICROS), d.serverSpinNanos());
        assertEquals(TimeUnit.MICROSECONDS.toNanos(TcpTransport.DEFAULT_CLIENT_SPIN_MICROS), d.clientSpinNanos());
        TcpTransport t = TcpTransport.parse("nio", "7", String.valueOf(TcpTransport.MAX_SPIN_MICROS));
        assertEquals(7_000, t.serverSpinNanos());
        assertEquals(TimeUnit.MICROSECONDS.toNanos(TcpTransport.MAX_SPIN_MICROS), t.clientSpinNanos());
    }

    @Test
    void badValuesAreRefusedNamingTheValueAndTheLimit() {
        IllegalArgumentException kind = assertThrows(IllegalArgumentException.class,
                () -> TcpTransport.parse("rdma", null, null));
        assertTrue(kind.getMessage().contains("'rdma'") && kind.getMessage().contains("auto, epoll, nio")
                && kind.getMessage().contains(TcpTransport.TRANSPORT_PROPERTY), kind.getMessage());
        IllegalArgumentException negative = assertThrows(IllegalArgumentException.class,
                () -> TcpTransport.parse("nio", "-1", null));
        assertTrue(negative.getMessage().contains(TcpTransport.SERVER_SPIN_PROPERTY)
                && negative.getMessage().contains("-1") && negative.getMessage().contains("10000"),
                negative.getMessage());
        IllegalArgumentException tooLong = assertThrows(IllegalArgumentException.class,
                () -> TcpTransport.of(TcpTransport.Kind.NIO, 0, TcpTransport.MAX_SPIN_MICROS + 1));
        assertTrue(tooLong.getMessage().contains(TcpTransport.CLIENT_SPIN_PROPERTY)
                && tooLong.getMessage().contains("10001"), tooLong.getMessage());
        IllegalArgumentException text = assertThrows(IllegalArgumentException.class,
                () -> TcpTransport.parse("nio", null, "fast"));
        assertTrue(text.getMessage().contains("'fast'") && text.getMessage().contains("microseconds"),
                text.getMessage());
    }
}
