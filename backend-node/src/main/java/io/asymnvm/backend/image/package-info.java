/** The backend's PM image: format, superblock validation, exclusive lock and clean-shutdown mark. */
package io.asymnvm.backend.image;
