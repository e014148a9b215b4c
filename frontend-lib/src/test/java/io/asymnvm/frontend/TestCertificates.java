package io.asymnvm.frontend;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Self-signed certificates for TLS tests, made by the JDK's {@code keytool} (a child process; EC P-256, subject
 * alternative name IP 127.0.0.1) and written as PEM: {@code NAME.crt} and {@code NAME.key} (PKCS#8).
 */
final class TestCertificates {
    private static final char[] PASSWORD = "test-only".toCharArray();

    private TestCertificates() {
    }

    /** Creates {@code dir/NAME.crt} and {@code dir/NAME.key}; returns {certificate, key}. */
    static Path[] create(Path dir, String name) throws Exception {
        Path store = dir.resolve(name + ".p12");
        Path keytool = Path.of(System.getProperty("java.home"), "bin", "keytool");
        Process p = new ProcessBuilder(List.of(keytool.toString(), "-genkeypair", "-alias", name, "-keyalg", "EC",
                "-groupname", "secp256r1", "-sigalg", "SHA256withECDSA", "-dname", "CN=" + name, "-validity", "2",
                "-ext", "SAN=ip:127.0.0.1", "-storetype", "PKCS12", "-keystore", store.toString(),
                "-storepass", new String(PASSWORD), "-keypass", new String(PASSWORD)))
                .redirectErrorStream(true).start();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            p.destroyForcibly();
            throw new IllegalStateException("keytool failed: " + output);
        }
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(store)) {
            ks.load(in, PASSWORD);
        }
        Path crt = dir.resolve(name + ".crt");
        Path key = dir.resolve(name + ".key");
        Files.writeString(crt, pem("CERTIFICATE", ks.getCertificate(name).getEncoded()));
        Files.writeString(key, pem("PRIVATE KEY", ks.getKey(name, PASSWORD).getEncoded()));
        return new Path[] {crt, key};
    }

    private static String pem(String type, byte[] der) {
        return "-----BEGIN " + type + "-----\n" + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
                .encodeToString(der) + "\n-----END " + type + "-----\n";
    }
}
