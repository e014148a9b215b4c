package io.asymnvm.system;

import io.asymnvm.core.fabric.Fabric;
import io.asymnvm.core.layout.RegionIds;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A backend's fabric to a mirror (what its shipper uses) that the mirror tests hold at a chosen point: once
 * {@link #holdNextCall} is set, its next control call waits until {@link #releaseCall}; once
 * {@link #holdNextRedoWrite} is set, its next WRITE of frontend 0's redo waits until {@link #releaseWrite}. Once
 * {@link #severed}, every operation fails, as with a backend gone for good (and it connects no more, so it never
 * copies again).
 */
final class HeldShipper extends SeverableFabric {
    final CountDownLatch callHeld = new CountDownLatch(1);
    final CountDownLatch releaseCall = new CountDownLatch(1);
    final CountDownLatch writeHeld = new CountDownLatch(1);
    final CountDownLatch releaseWrite = new CountDownLatch(1);
    volatile boolean holdNextCall;
    volatile boolean holdNextRedoWrite;

    HeldShipper(Fabric delegate) {
        super(delegate, "the backend is lost");
    }

    @Override
    void beforeCall() {
        if (holdNextCall) {
            holdNextCall = false;
            callHeld.countDown();
            await(releaseCall);
        }
    }

    @Override
    void beforeWrite(int regionId) {
        if (holdNextRedoWrite && regionId == RegionIds.redo(0)) {
            holdNextRedoWrite = false;
            writeHeld.countDown();
            await(releaseWrite);
        }
    }

    private static void await(CountDownLatch release) {
        try {
            if (!release.await(60, TimeUnit.SECONDS)) {
                throw new IllegalStateException("the held shipper was never released");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
