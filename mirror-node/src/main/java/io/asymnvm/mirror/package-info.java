/**
 * The mirror node (DESIGN §6): keeps a replica of a backend's PM image by receiving its shipped logs and replaying
 * them with the backend's own replay code, accepts SYNC frontends' semantic records, and is promoted to backend
 * under a new epoch when the backend is lost.
 */
package io.asymnvm.mirror;
