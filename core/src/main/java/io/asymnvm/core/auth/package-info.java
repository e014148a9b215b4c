/**
 * Frontend authentication: the per-frontend secrets of a backend ({@link io.asymnvm.core.auth.FrontendCredentials},
 * a {@code java.util.Properties} file of mode 0600) and the challenge–response proof an ATTACH carries
 * ({@link io.asymnvm.core.auth.AttachProof}, HMAC-SHA256 over the server's nonce, the frontend id and the expected
 * epoch). Shared by the backend, which creates and checks, and the frontend library, which proves.
 */
package io.asymnvm.core.auth;
