/** The DRAM page cache: Caffeine for clean pages, pinned dirty pages until the backend has applied them. */
package io.asymnvm.frontend.cache;
