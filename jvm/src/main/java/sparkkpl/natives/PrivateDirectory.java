package sparkkpl.natives;

import com.sun.security.auth.module.UnixSystem;

import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.EnumSet;
import java.util.Set;

/**
 * A folder only the current user can change: the daemon is executed from it, so whoever can write
 * there could swap the binary between our check and the KPL's launch.
 *
 * <p>Policy: a missing folder is created {@code 0700}. An existing one must be a real directory (not a
 * symbolic link) owned by the current user. If group or others may <em>write</em> to it, it is refused:
 * someone else may already have planted entries, so nothing inside can be trusted. If they may only
 * read or search it, the extra bits are removed: nobody else can have changed its contents, so
 * tightening is safe. Owner bits are never added: a folder its owner made read-only fails on write.
 * Parents of the folder are trusted as configured (the default parent is the sticky temp folder).
 */
final class PrivateDirectory {

    static final Set<PosixFilePermission> OWNER_ONLY = PosixFilePermissions.fromString("rwx------");
    private static final Set<PosixFilePermission> WRITE_BY_OTHERS =
            EnumSet.of(PosixFilePermission.GROUP_WRITE, PosixFilePermission.OTHERS_WRITE);
    static final FileAttribute<Set<PosixFilePermission>> OWNER_ONLY_ATTRIBUTE =
            PosixFilePermissions.asFileAttribute(OWNER_ONLY);

    private PrivateDirectory() {}

    /** Creates {@code dir}, or checks an existing one against the policy. */
    static void ensure(Path dir) throws IOException {
        PosixFileAttributes attributes = attributesOrNull(dir);
        if (attributes == null) {
            create(dir);
            attributes = Files.readAttributes(dir, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        }
        checkOnlyOwnerCanWrite(dir, attributes);
        Set<PosixFilePermission> permissions = attributes.permissions();
        Set<PosixFilePermission> ownerBits = EnumSet.noneOf(PosixFilePermission.class);
        ownerBits.addAll(permissions);
        ownerBits.retainAll(OWNER_ONLY);
        if (!ownerBits.equals(permissions)) {
            setPermissionsNoFollow(dir, ownerBits);
        }
    }

    /**
     * Checks an existing folder the user chose (and that is therefore not ours to tighten): a real
     * directory of this user's that no one else can write.
     */
    static void checkOnlyOwnerCanWrite(Path dir) throws IOException {
        checkOnlyOwnerCanWrite(dir, Files.readAttributes(dir, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS));
    }

    private static void checkOnlyOwnerCanWrite(Path dir, PosixFileAttributes attributes) throws IOException {
        if (attributes.isSymbolicLink()) {
            throw new IOException(dir + " is a symbolic link");
        }
        if (!attributes.isDirectory()) {
            throw new IOException(dir + " is not a directory");
        }
        long owner = ownerUid(dir);
        if (owner != currentUid()) {
            throw new OwnedByAnotherUser(
                    dir + " is owned by uid " + owner + ", not by this user (uid " + currentUid() + ")");
        }
        Set<PosixFilePermission> permissions = attributes.permissions();
        if (permissions.stream().anyMatch(WRITE_BY_OTHERS::contains)) {
            throw new IOException(dir + " can be written by other users ("
                    + PosixFilePermissions.toString(permissions) + ")");
        }
    }

    /** A folder another user made: theirs to change, so never ours to run from, though ours may be elsewhere. */
    static final class OwnedByAnotherUser extends IOException {
        private static final long serialVersionUID = 1L;

        OwnedByAnotherUser(String message) {
            super(message);
        }
    }

    static long ownerUid(Path path) throws IOException {
        return ((Number) Files.getAttribute(path, "unix:uid", LinkOption.NOFOLLOW_LINKS)).longValue();
    }

    static long currentUid() {
        return new UnixSystem().getUid();
    }

    /** chmod that fails on a symbolic link instead of changing its target. */
    static void setPermissionsNoFollow(Path path, Set<PosixFilePermission> permissions) throws IOException {
        Files.getFileAttributeView(path, PosixFileAttributeView.class, LinkOption.NOFOLLOW_LINKS)
                .setPermissions(permissions);
    }

    private static PosixFileAttributes attributesOrNull(Path dir) throws IOException {
        try {
            return Files.readAttributes(dir, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException absent) {
            return null;
        }
    }

    private static void create(Path dir) throws IOException {
        Path parent = dir.getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        try {
            Files.createDirectory(dir, OWNER_ONLY_ATTRIBUTE);
            // The attribute is filtered by the umask; set the mode exactly.
            setPermissionsNoFollow(dir, OWNER_ONLY);
        } catch (FileAlreadyExistsException createdConcurrently) {
            // Another process won the race; the caller checks what it made like any existing folder.
        }
    }
}
