package io.asymnvm.backend.image;

import io.asymnvm.backend.BackendConfiguration;
import io.asymnvm.core.layout.SuperblockLayout;
import io.asymnvm.core.layout.SuperblockLayout.Superblock;
import io.asymnvm.core.region.MappedRegion;
import io.asymnvm.core.region.PersistentRegion;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A backend's PM image: formats a new file or validates an existing one (superblock read through a plain file
 * channel before anything is mapped), holds an exclusive lock so two backends never share a file, and keeps a
 * mark file that exists while the node runs, so the next start knows whether the last shutdown was clean.
 */
public final class PmImage implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(PmImage.class);
    /**
     * Lock files of the images open in this JVM. A second start on the same file must be refused before it opens
     * a channel of its own: file locks belong to the process, and closing any channel on the file releases them
     * (see {@link FileLock}), which would let another process open the image the first node still serves.
     */
    private static final Set<Path> LOCKED_HERE = ConcurrentHashMap.newKeySet();

    private final PersistentRegion region;
    private final Superblock superblock;
    private final FileChannel lockChannel;
    private final FileLock lock;
    private final Path markFile;
    private final Path lockFile;
    private final boolean cleanShutdown;
    private final boolean formatted;

    private PmImage(PersistentRegion region, Superblock superblock, FileChannel lockChannel, FileLock lock,
                    Path markFile, Path lockFile, boolean cleanShutdown, boolean formatted) {
        this.region = region;
        this.superblock = superblock;
        this.lockChannel = lockChannel;
        this.lock = lock;
        this.markFile = markFile;
        this.lockFile = lockFile;
        this.cleanShutdown = cleanShutdown;
        this.formatted = formatted;
    }

    /**
     * Reads and validates the superblock of an existing image without mapping it. Fails with the file, offset,
     * expected and actual values on corruption, or both versions on a format mismatch.
     */
    public static Superblock readSuperblock(Path file) {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            long size = ch.size();
            if (size < SuperblockLayout.LENGTH) {
                throw new io.asymnvm.core.CorruptRecordException(file.toString(), 0, "file length >= superblock",
                        SuperblockLayout.LENGTH, size);
            }
            ByteBuffer b = ByteBuffer.allocate(SuperblockLayout.LENGTH);
            while (b.hasRemaining() && ch.read(b, b.position()) > 0) {
                // read fully
            }
            return SuperblockLayout.decode(b.array(), file.toString(), size);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read PM file " + file, e);
        }
    }

    /** Opens an existing image or formats a new one as configured. */
    public static PmImage open(BackendConfiguration config) {
        return open(config, null);
    }

    /**
     * As {@link #open(BackendConfiguration)}, but a new image is formatted as {@code formatAs} (a mirror: its
     * backend's geometry, identity and epoch) when not null; an existing image is opened as it is.
     */
    public static PmImage open(BackendConfiguration config, Superblock formatAs) {
        Path file = config.pmFile().toAbsolutePath();
        boolean exists = Files.exists(file) && sizeOf(file) > 0;
        Superblock sb;
        if (exists) {
            sb = readSuperblock(file);
            if (sb.fileSize() != config.size() && config.size() != BackendConfiguration.DEFAULT_SIZE) {
                LOG.warn("{}: configured size {} ignored, the image has {}", file, config.size(), sb.fileSize());
            }
        } else if (formatAs != null) {
            sb = formatAs;
        } else {
            sb = SuperblockLayout.plan(config.size(), config.pageSize(), config.slabSize(), config.maxFrontends(),
                    config.semRingCapacity(), config.redoRingCapacity(), UUID.randomUUID(),
                    System.currentTimeMillis());
        }
        Path lockFile = file.resolveSibling(file.getFileName() + ".lock");
        Path markFile = file.resolveSibling(file.getFileName() + ".mark");
        Path parent = file.toAbsolutePath().getParent();
        if (parent != null && !Files.isDirectory(parent)) {
            throw new IllegalArgumentException("directory " + parent + " of PM file " + file.getFileName()
                    + " does not exist; create it first");
        }
        if (!LOCKED_HERE.add(lockFile)) {
            throw new IllegalStateException("PM file " + file + " is in use by another backend in this JVM (lock "
                    + lockFile + ")");
        }
        FileChannel lockChannel = null;
        FileLock lock;
        try {
            lockChannel = FileChannel.open(lockFile, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
            try {
                lock = lockChannel.tryLock();
            } catch (OverlappingFileLockException e) {
                lock = null;
            }
            if (lock == null) {
                lockChannel.close();
                LOCKED_HERE.remove(lockFile);
                throw new IllegalStateException("PM file " + file + " is in use by another backend (lock "
                        + lockFile + ")");
            }
        } catch (IOException e) {
            LOCKED_HERE.remove(lockFile);
            throw new UncheckedIOException("cannot lock " + lockFile, e);
        }
        PersistentRegion region = null;
        try {
            boolean clean = !Files.exists(markFile);
            if (exists) {
                region = MappedRegion.open(file, config.mapMode());
            } else {
                // Format under a temporary name and rename: a crash while formatting leaves no half-made image
                // (an all-zero file would otherwise be refused forever as a corrupt superblock).
                Path formatting = file.resolveSibling(file.getFileName() + ".formatting");
                Files.deleteIfExists(formatting);
                PersistentRegion fresh = MappedRegion.create(formatting, sb.fileSize(), config.mapMode());
                try {
                    SuperblockLayout.write(fresh, sb);
                } finally {
                    fresh.close();
                }
                Files.move(formatting, file, java.nio.file.StandardCopyOption.ATOMIC_MOVE,
                        java.nio.file.StandardCopyOption.REPLACE_EXISTING);
                region = MappedRegion.open(file, config.mapMode());
                clean = true;
                LOG.info("formatted {}: {} slabs of {} bytes, {} frontends", file, sb.slabCount(), sb.slabSize(),
                        sb.maxFrontends());
            }
            Files.writeString(markFile, "running pid " + ProcessHandle.current().pid() + "\n");
            if (!clean) {
                LOG.warn("{}: previous shutdown was not clean; recovering from the logs", file);
            }
            return new PmImage(region, sb, lockChannel, lock, markFile, lockFile, clean, !exists);
        } catch (RuntimeException | IOException e) {
            if (region != null) {
                region.close();
            }
            try {
                lock.release();
                lockChannel.close();
            } catch (IOException ignored) {
                // best effort
            }
            LOCKED_HERE.remove(lockFile);
            if (e instanceof IOException io) {
                throw new UncheckedIOException(io);
            }
            throw (RuntimeException) e;
        }
    }

    /**
     * Uses a region the caller provides (simulated PM in crash tests): formats it if its first bytes are zero,
     * validates its superblock otherwise. No lock and no mark file; closing the image does not close the region.
     */
    public static PmImage over(PersistentRegion region, BackendConfiguration config) {
        boolean blank = region.getLong(SuperblockLayout.MAGIC_OFFSET) == 0;
        Superblock sb;
        if (blank) {
            sb = SuperblockLayout.plan(region.size(), config.pageSize(), config.slabSize(), config.maxFrontends(),
                    config.semRingCapacity(), config.redoRingCapacity(), UUID.randomUUID(), 0);
            SuperblockLayout.write(region, sb);
        } else {
            sb = SuperblockLayout.decode(region.read(0, SuperblockLayout.LENGTH), region.name(), region.size());
        }
        // No mark file tells how the region's previous run ended: only a blank region is known to have none, and
        // anything else is treated as recovering from a crash (the conservative choice: the redo ring's torn tail
        // is then excused as what a crash leaves instead of being taken for damage, and the catalog is rebuilt).
        // Saying "clean" here made a power-failure image's torn redo record followed by a whole one quarantine
        // the frontend (PowerFailureTest with -Dasymnvm.powerFailure.redoBatchTransactions=2).
        return new PmImage(region, sb, null, null, null, null, blank, blank);
    }

    private static long sizeOf(Path file) {
        try {
            return Files.size(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public PersistentRegion region() {
        return region;
    }

    public Superblock superblock() {
        return superblock;
    }

    /** False when the previous run ended without {@link #close()} (crash or kill). */
    public boolean previousShutdownClean() {
        return cleanShutdown;
    }

    public boolean freshlyFormatted() {
        return formatted;
    }

    @Override
    public void close() {
        close(true);
    }

    /**
     * Closes after a start that failed (corrupt log, port taken): the mark file stays if the previous shutdown
     * was unclean, so the next start still knows it recovers from a crash.
     */
    public void closeAfterFailedStart() {
        close(cleanShutdown);
    }

    private void close(boolean removeMark) {
        if (markFile == null) {
            return; // caller-provided region: the caller closes it
        }
        region.close();
        try {
            if (removeMark) {
                Files.deleteIfExists(markFile);
            }
            lock.release();
            lockChannel.close();
        } catch (IOException e) {
            LOG.warn("closing {}: {}", markFile, e.toString());
        } finally {
            LOCKED_HERE.remove(lockFile);
        }
    }
}
