/**
 * A key-value service on a persistent map opened by name: {@link io.asymnvm.examples.kv.KeyValueStore} is the
 * transactional interface, {@link io.asymnvm.examples.kv.KeyValueStoreImpl} runs it on a hash map or, for ordered
 * scans, a B+tree ({@link io.asymnvm.examples.kv.StructureKind}); {@link io.asymnvm.examples.kv.LoadPattern} is the
 * deterministic data set {@code asymnvm kv load} writes and {@code asymnvm kv verify} checks.
 */
package io.asymnvm.examples.kv;
