/**
 * On-media formats of the persistent structures: the self-describing root header shared by every structure, the
 * 4 KiB node page (slotted records) used by B+tree nodes and hash buckets, the node pool that carves page-aligned
 * nodes out of allocator blocks, and the structure-specific root fields. Every offset lives in exactly one of
 * these classes; all multi-byte values are little-endian.
 */
package io.asymnvm.structures.layout;
