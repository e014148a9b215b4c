package io.asymnvm.core.fabric.tcp;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.channel.unix.FileDescriptor;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Writes a request frame to the socket from the posting thread itself, instead of handing it to the connection's
 * Netty event loop. A write from any other thread than the loop's is a task for that loop: the loop must be woken
 * (an eventfd write, an {@code epoll_wait} return, a context switch) before the frame reaches the socket. On a
 * loaded machine that hand-off is a scheduling delay on every operation, paid before the request has even left:
 * one of the four thread wake-ups of a round trip (the loop to send, the backend's loop, the loop to receive, the
 * waiter). Writing directly removes it; the reply still arrives through the loop.
 *
 * <p>Order. Requests must reach the socket in posting order (replies are matched first-in first-out). The caller
 * holds the connection's pending-queue lock around {@link #write}, so direct writes are ordered among themselves. A
 * frame the socket cannot take at once (its send buffer is full: a large redo batch) goes to the event loop for
 * the rest, and every later frame follows it there until the loop has written them all ({@code queued} counts
 * them; it drops to zero only after the loop handed the last one to the socket), so a direct write never overtakes
 * a queued one.
 *
 * <p>Plain connections only: with TLS every byte must pass the {@code SslHandler} in the pipeline. Either transport
 * ({@link TcpTransport}): NIO through the channel's {@code java.nio} socket, epoll through its file descriptor
 * (direct buffers only: the native write takes the buffer's address).
 *
 * <p>Threads: {@link #write} under the caller's lock; the counter is also decremented on the event loop.
 */
final class DirectWriter {
    /**
     * System property: {@code false} hands every frame to the event loop (the behaviour before direct writes), for
     * measuring one against the other in the same build. Default {@code true}.
     */
    static final String PROPERTY = "asymnvm.tcp.directWrite";
    static final boolean ENABLED = !"false".equalsIgnoreCase(System.getProperty(PROPERTY));

    /** Direct writes that returned 0 bytes before the rest of a frame is handed to the event loop. */
    private static final int ZERO_WRITES_BEFORE_HAND_OFF = 4;

    private final Channel channel;
    private final java.nio.channels.SocketChannel socket;
    /** The epoll channel's socket (null on NIO or when direct writes are off). */
    private final FileDescriptor fd;
    /** Frames handed to the event loop and not yet written by it. */
    private final AtomicInteger queued = new AtomicInteger();
    private long direct;
    private long handedOff;

    /** A Netty NIO channel that lets the posting thread reach its socket. */
    static final class DirectNioSocketChannel extends NioSocketChannel {
        java.nio.channels.SocketChannel socket() {
            return javaChannel();
        }
    }

    DirectWriter(Channel channel) {
        this(channel, ENABLED);
    }

    /** {@code direct}: the posting thread may write (false with TLS, or when {@link #PROPERTY} turns it off). */
    DirectWriter(Channel channel, boolean direct) {
        this.channel = channel;
        this.socket = direct && channel instanceof DirectNioSocketChannel d ? d.socket() : null;
        this.fd = direct && channel instanceof EpollSocketChannel e ? e.fd() : null;
    }

    /** Whether frames may be written directly (a plain NIO or epoll connection). */
    static boolean supported(Channel channel) {
        return channel instanceof DirectNioSocketChannel || channel instanceof EpollSocketChannel;
    }

    /**
     * Writes {@code frame} (released here) to the socket, directly if nothing is queued on the event loop and the
     * socket takes it, else through the loop. Under the caller's lock that orders posts.
     */
    void write(ByteBuf frame) {
        if ((socket != null || (fd != null && frame.isDirect())) && queued.get() == 0
                && frame.nioBufferCount() == 1) {
            ByteBuffer nio = frame.nioBuffer();
            int zeros = 0;
            try {
                while (nio.hasRemaining() && zeros < ZERO_WRITES_BEFORE_HAND_OFF) {
                    if (writeOnce(nio) == 0) {
                        zeros++;
                    }
                }
            } catch (IOException e) {
                frame.release();
                channel.close(); // the pending completions fail when the channel goes inactive
                return;
            }
            if (!nio.hasRemaining()) {
                frame.release();
                direct++;
                return;
            }
            frame.skipBytes(nio.position()); // the view starts at the reader index
        }
        handOff(frame);
    }

    /** One non-blocking write from {@code nio}'s position; returns the bytes written (0: the socket is full). */
    private int writeOnce(ByteBuffer nio) throws IOException {
        if (socket != null) {
            return socket.write(nio);
        }
        int n = fd.write(nio, nio.position(), nio.limit()); // 0 on EAGAIN; the position is not moved
        nio.position(nio.position() + n);
        return n;
    }

    private void handOff(ByteBuf frame) {
        handedOff++;
        queued.incrementAndGet();
        channel.writeAndFlush(frame).addListener(f -> {
            queued.decrementAndGet();
            if (!f.isSuccess()) {
                channel.close();
            }
        });
    }

    /** Frames written by the posting thread (under the caller's lock). */
    long direct() {
        return direct;
    }

    /** Frames handed to the event loop (under the caller's lock). */
    long handedOff() {
        return handedOff;
    }
}
