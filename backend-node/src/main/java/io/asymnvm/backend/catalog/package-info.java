/** The catalog of named roots: a Chronicle Map index, verified against and rebuilt from the PM root directories. */
package io.asymnvm.backend.catalog;
