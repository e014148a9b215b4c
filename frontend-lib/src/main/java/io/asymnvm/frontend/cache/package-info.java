/**
 * The DRAM page cache: Caffeine for clean pages, pinned dirty pages until the backend has applied them, and the
 * change sequence (a seqlock) that lets read-only transactions read it without the execution lock.
 */
package io.asymnvm.frontend.cache;
