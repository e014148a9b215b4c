package io.asymnvm.core.fabric.tcp;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.Epoll;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.DataInputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * {@link DirectWriter}: frames go to the socket from the posting thread while it takes them; once the peer stops
 * reading and the send buffer fills, the rest goes through the event loop, later frames follow it there, and the
 * peer receives every frame whole and in order.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class DirectWriterTest {
    private static final int FRAME = 64 * 1024;
    private static final int MAX_FRAMES = 2_000; // 128 MiB: far more than any socket buffer

    @ParameterizedTest
    @EnumSource(value = TcpTransport.Kind.class, names = {"EPOLL", "NIO"})
    void shouldHandOffToTheEventLoopWhenTheSocketIsFullAndKeepTheOrder(TcpTransport.Kind kind) throws Exception {
        assumeTrue(kind != TcpTransport.Kind.EPOLL || Epoll.isAvailable(), "native epoll does not load here");
        TcpTransport transport = TcpTransport.of(kind, 0, 0);
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, transport.ioHandlerFactory(0));
        try (ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            Channel ch = new Bootstrap().group(group).channelFactory(transport.clientChannel(true))
                    .handler(new ChannelInboundHandlerAdapter())
                    .connect(server.getLocalSocketAddress()).syncUninterruptibly().channel();
            try (Socket peer = server.accept()) {
                assertTrue(DirectWriter.supported(ch));
                DirectWriter writer = new DirectWriter(ch);
                int frames = 0;
                // the peer reads nothing yet: the first frames go directly, until the socket stops taking them
                while (writer.handedOff() == 0 && frames < MAX_FRAMES) {
                    writer.write(frame(frames++));
                }
                assertTrue(writer.direct() > 0, "frames written by the posting thread");
                assertTrue(writer.handedOff() > 0, "a frame the full socket could not take went to the event loop");
                long directBefore = writer.direct();
                for (int i = 0; i < 8; i++) {
                    writer.write(frame(frames++)); // must queue behind the handed-off frame, not overtake it
                }
                assertEquals(directBefore, writer.direct(), "no direct write while frames wait on the event loop");
                DataInputStream in = new DataInputStream(peer.getInputStream());
                byte[] got = new byte[FRAME];
                for (int i = 0; i < frames; i++) {
                    in.readFully(got);
                    assertEquals(i, ((got[0] & 0xFF) << 24 | (got[1] & 0xFF) << 16 | (got[2] & 0xFF) << 8
                            | (got[3] & 0xFF)), "frame " + i + " arrives in posting order");
                    assertEquals((byte) i, got[FRAME - 1], "frame " + i + " arrives whole");
                }
                System.out.printf("direct writer (" + transport.name() + "): %d frames, %d direct, %d handed to the event loop%n", frames,
                        writer.direct(), writer.handedOff());
            } finally {
                ch.close().syncUninterruptibly();
            }
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        }
    }

    private static ByteBuf frame(int index) {
        ByteBuf b = Unpooled.directBuffer(FRAME);
        b.writeInt(index);
        b.writeZero(FRAME - 5);
        b.writeByte(index);
        return b;
    }
}
