package io.asymnvm.structures;

/** The map contract on {@link PersistentHashMap}. */
class HashMapContractTest extends PersistentMapContractTest {
    @Override
    StructureType type() {
        return StructureType.HASH_MAP;
    }
}
