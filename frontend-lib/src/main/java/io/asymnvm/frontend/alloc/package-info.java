/** The block allocator inside granted slabs; its metadata lives in PM and changes only through redo. */
package io.asymnvm.frontend.alloc;
