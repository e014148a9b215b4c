package io.asymnvm.core.fabric.tcp;

import io.netty.channel.socket.SocketChannel;
import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslHandler;

import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLParameters;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * TLS for the tcp fabric, through Netty's {@link SslHandler} (JDK provider), configured from PEM files: a
 * certificate chain, its PKCS#8 private key, and the CA certificates to trust. A server with
 * {@link #server(Path, Path, Path) client CAs} requires every client to present a certificate they signed (mutual
 * TLS); a client verifies the server's certificate against its CAs and the host name it dialled (the certificate's
 * subject alternative names must hold it). Every file is read and checked when the settings are built, so a bad
 * file fails before anything is bound or connected. Immutable and thread-safe.
 */
public final class TcpTls {
    private final SslContext context;
    private final boolean client;

    private TcpTls(SslContext context, boolean client) {
        this.context = context;
        this.client = client;
    }

    /**
     * Server settings: {@code certificate} (PEM chain) and {@code key} (PEM, PKCS#8); {@code clientCa} (PEM, or
     * null) turns on mutual TLS, refusing any client without a certificate those CAs signed.
     */
    public static TcpTls server(Path certificate, Path key, Path clientCa) {
        requireFile("TLS certificate", certificate);
        requireFile("TLS private key", key);
        try {
            SslContextBuilder b = SslContextBuilder.forServer(certificate.toFile(), key.toFile());
            if (clientCa != null) {
                requireFile("TLS client CA", clientCa);
                b.trustManager(clientCa.toFile()).clientAuth(ClientAuth.REQUIRE);
            }
            return new TcpTls(b.build(), false);
        } catch (SSLException | IllegalArgumentException e) {
            throw new IllegalArgumentException("cannot use TLS certificate " + certificate + " with key " + key
                    + (clientCa == null ? "" : " and client CA " + clientCa) + ": " + rootMessage(e), e);
        }
    }

    /**
     * Client settings: {@code serverCa} (PEM) are the CAs that may sign the server's certificate; {@code
     * certificate} and {@code key} (PEM, both or neither) are this client's for a server that requires one.
     */
    public static TcpTls client(Path serverCa, Path certificate, Path key) {
        requireFile("TLS server CA", serverCa);
        if ((certificate == null) != (key == null)) {
            throw new IllegalArgumentException("a TLS client certificate needs its key and a key its certificate: "
                    + "certificate " + certificate + ", key " + key);
        }
        try {
            SslContextBuilder b = SslContextBuilder.forClient().trustManager(serverCa.toFile());
            if (certificate != null) {
                requireFile("TLS client certificate", certificate);
                requireFile("TLS client key", key);
                b.keyManager(certificate.toFile(), key.toFile());
            }
            return new TcpTls(b.build(), true);
        } catch (SSLException | IllegalArgumentException e) {
            throw new IllegalArgumentException("cannot use TLS server CA " + serverCa
                    + (certificate == null ? "" : " with client certificate " + certificate + " and key " + key)
                    + ": " + rootMessage(e), e);
        }
    }

    /** Puts an {@link SslHandler} first in a server channel's pipeline; nothing when {@code tls} is null. */
    static void installServer(TcpTls tls, io.netty.channel.Channel ch) {
        if (tls != null) {
            ch.pipeline().addFirst("tls", tls.context.newHandler(ch.alloc()));
        }
    }

    /** Puts an {@link SslHandler} first in a client channel's pipeline, verifying the server as {@code host}. */
    static void installClient(TcpTls tls, SocketChannel ch, String host, int port) {
        if (tls == null) {
            return;
        }
        if (!tls.client) {
            throw new IllegalArgumentException("server TLS settings given to a client");
        }
        SslHandler handler = tls.context.newHandler(ch.alloc(), host, port);
        SSLEngine engine = handler.engine();
        SSLParameters params = engine.getSSLParameters();
        params.setEndpointIdentificationAlgorithm("HTTPS"); // the certificate must name the host dialled
        engine.setSSLParameters(params);
        ch.pipeline().addFirst("tls", handler);
    }

    boolean isClient() {
        return client;
    }

    private static void requireFile(String what, Path file) {
        if (file == null) {
            throw new IllegalArgumentException(what + " file not given");
        }
        if (!Files.isReadable(file)) {
            throw new IllegalArgumentException(what + " file " + file + " does not exist or cannot be read");
        }
    }

    private static String rootMessage(Throwable t) {
        Throwable c = t;
        while (c.getCause() != null && c.getCause() != c) {
            c = c.getCause();
        }
        return c == t ? String.valueOf(t.getMessage()) : t.getMessage() + " (" + c + ")";
    }
}
