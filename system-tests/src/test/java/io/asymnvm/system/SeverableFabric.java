package io.asymnvm.system;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.fabric.Completion;
import io.asymnvm.core.fabric.Fabric;
import io.asymnvm.core.fabric.FabricConnection;
import io.asymnvm.core.fabric.ForwardingConnection;
import io.asymnvm.core.fabric.ForwardingFabric;

/**
 * A fabric of a mirror test that fails every operation and every connect with {@code CONNECTION_LOST} while
 * {@link #severed} (a broken link, a backend lost for good), and lets a subclass hold a control call or a WRITE
 * before it goes out ({@link HeldShipper}).
 */
class SeverableFabric extends ForwardingFabric {
    private final String what;
    volatile boolean severed;

    /** {@code what} names the injected failure in its message ("the link to the mirror broke"). */
    SeverableFabric(Fabric delegate, String what) {
        super(delegate);
        this.what = what;
    }

    private void failIfSevered() {
        if (severed) {
            throw new AsymNvmException(ErrorCode.CONNECTION_LOST, "injected: " + what);
        }
    }

    /** Runs before each control call goes out (or fails, severed). */
    void beforeCall() {
    }

    /** Runs before each WRITE goes out (or fails, severed). */
    void beforeWrite(int regionId) {
    }

    @Override
    protected FabricConnection wrap(FabricConnection connection) {
        if (severed) {
            connection.close();
            failIfSevered();
        }
        return new ForwardingConnection(connection) {
            @Override
            public Completion call(byte[] request) {
                beforeCall();
                failIfSevered();
                return super.call(request);
            }

            @Override
            public Completion write(int regionId, long offset, byte[] data, int dataOffset, int length) {
                beforeWrite(regionId);
                failIfSevered();
                return super.write(regionId, offset, data, dataOffset, length);
            }

            @Override
            public Completion read(int regionId, long offset, int length) {
                failIfSevered();
                return super.read(regionId, offset, length);
            }

            @Override
            public Completion flush(long stamp, boolean stamped) {
                failIfSevered();
                return super.flush(stamp, stamped);
            }
        };
    }
}
