package io.asymnvm.structures;

/** The map contract on {@link PersistentBTree}. */
class BTreeContractTest extends PersistentMapContractTest {
    @Override
    StructureType type() {
        return StructureType.BTREE;
    }
}
