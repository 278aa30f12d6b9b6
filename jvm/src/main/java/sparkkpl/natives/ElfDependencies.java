package sparkkpl.natives;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What the dynamic loader needs to start a 64-bit little-endian ELF file (x86_64 and aarch64, the
 * platforms the KPL ships a Linux daemon for), read from its headers without running it: the
 * interpreter ({@code PT_INTERP}), the libraries ({@code DT_NEEDED}), the symbol versions it needs
 * from each ({@code .gnu.version_r}, e.g. {@code GLIBC_2.25} from {@code libc.so.6}), and, for a
 * library, the versions it defines ({@code .gnu.version_d}).
 *
 * <p>Only the headers and these small sections are read, not the 86 MB of the daemon.
 */
record ElfDependencies(int machine, String interpreter, List<String> needed,
                       Map<String, List<String>> versionsNeeded, List<String> versionsDefined) {

    static final int EM_X86_64 = 62;
    static final int EM_AARCH64 = 183;
    private static final int PT_INTERP = 3;
    private static final int SHT_DYNAMIC = 6;
    private static final int SHT_GNU_VERDEF = 0x6ffffffd;
    private static final int SHT_GNU_VERNEED = 0x6ffffffe;
    private static final long DT_NULL = 0;
    private static final long DT_NEEDED = 1;
    /** Far beyond any real header section; a bigger size means a damaged file, not a reason to allocate it. */
    private static final long MAX_SECTION = 16 << 20;

    /** @throws IOException when {@code file} is not a 64-bit little-endian ELF file or is damaged */
    static ElfDependencies read(Path file) throws IOException {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
            return new Reader(channel, file).read();
        }
    }

    private record Section(int type, long offset, long size, int link, int info) {}

    private static final class Reader {
        private final FileChannel channel;
        private final Path file;

        Reader(FileChannel channel, Path file) {
            this.channel = channel;
            this.file = file;
        }

        ElfDependencies read() throws IOException {
            ByteBuffer header = bytes(0, 64);
            if (header.getInt(0) != 0x464c457f) { // "\x7fELF" read little-endian
                throw new IOException(file + " is not an ELF file");
            }
            if (header.get(4) != 2 || header.get(5) != 1) {
                throw new IOException(file + " is not a 64-bit little-endian ELF file");
            }
            int machine = Short.toUnsignedInt(header.getShort(18));
            String interpreter = interpreter(header.getLong(32), Short.toUnsignedInt(header.getShort(54)),
                Short.toUnsignedInt(header.getShort(56)));
            List<Section> sections = sections(header.getLong(40), Short.toUnsignedInt(header.getShort(58)),
                Short.toUnsignedInt(header.getShort(60)));
            List<String> needed = new ArrayList<>();
            Map<String, List<String>> versionsNeeded = new LinkedHashMap<>();
            List<String> versionsDefined = new ArrayList<>();
            for (Section section : sections) {
                switch (section.type()) {
                    case SHT_DYNAMIC -> needed.addAll(needed(section, strings(sections, section)));
                    case SHT_GNU_VERNEED -> versionsNeeded.putAll(versionsNeeded(section, strings(sections, section)));
                    case SHT_GNU_VERDEF -> versionsDefined.addAll(versionsDefined(section, strings(sections, section)));
                    default -> { }
                }
            }
            return new ElfDependencies(machine, interpreter, needed, versionsNeeded, versionsDefined);
        }

        /** The path in {@code PT_INTERP}; null for a file without one (a shared library). */
        private String interpreter(long offset, int entrySize, int count) throws IOException {
            for (int i = 0; i < count; i++) {
                ByteBuffer entry = bytes(offset + (long) i * entrySize, 56);
                if (entry.getInt(0) == PT_INTERP) {
                    return string(bytes(entry.getLong(8), entry.getLong(32)), 0);
                }
            }
            return null;
        }

        private List<Section> sections(long offset, int entrySize, int count) throws IOException {
            List<Section> sections = new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
                ByteBuffer entry = bytes(offset + (long) i * entrySize, 64);
                sections.add(new Section(entry.getInt(4), entry.getLong(24), entry.getLong(32), entry.getInt(40),
                    entry.getInt(44)));
            }
            return sections;
        }

        /** The string table a section's {@code sh_link} names. */
        private ByteBuffer strings(List<Section> sections, Section of) throws IOException {
            if (of.link() <= 0 || of.link() >= sections.size()) {
                throw new IOException(file + " has a section linked to no string table");
            }
            Section table = sections.get(of.link());
            return bytes(table.offset(), table.size());
        }

        private List<String> needed(Section dynamic, ByteBuffer strings) throws IOException {
            ByteBuffer entries = bytes(dynamic.offset(), dynamic.size());
            List<String> needed = new ArrayList<>();
            for (int at = 0; at + 16 <= entries.limit(); at += 16) {
                long tag = entries.getLong(at);
                if (tag == DT_NULL) {
                    break;
                }
                if (tag == DT_NEEDED) {
                    needed.add(string(strings, entries.getLong(at + 8)));
                }
            }
            return needed;
        }

        /** {@code Elf64_Verneed} entries (one per library), each with its {@code Elf64_Vernaux} versions. */
        private Map<String, List<String>> versionsNeeded(Section verneed, ByteBuffer strings) throws IOException {
            ByteBuffer entries = bytes(verneed.offset(), verneed.size());
            Map<String, List<String>> needed = new LinkedHashMap<>();
            int at = 0;
            for (int i = 0; i < verneed.info(); i++) {
                int count = Short.toUnsignedInt(entries.getShort(at + 2));
                List<String> versions = new ArrayList<>(count);
                int aux = at + entries.getInt(at + 8);
                for (int j = 0; j < count; j++) {
                    versions.add(string(strings, Integer.toUnsignedLong(entries.getInt(aux + 8))));
                    aux += entries.getInt(aux + 12);
                }
                needed.put(string(strings, Integer.toUnsignedLong(entries.getInt(at + 4))), versions);
                at += entries.getInt(at + 12);
            }
            return needed;
        }

        /** The name of each {@code Elf64_Verdef}: its first {@code Elf64_Verdaux}. */
        private List<String> versionsDefined(Section verdef, ByteBuffer strings) throws IOException {
            ByteBuffer entries = bytes(verdef.offset(), verdef.size());
            List<String> defined = new ArrayList<>();
            int at = 0;
            for (int i = 0; i < verdef.info(); i++) {
                int aux = at + entries.getInt(at + 12);
                defined.add(string(strings, Integer.toUnsignedLong(entries.getInt(aux))));
                at += entries.getInt(at + 16);
            }
            return defined;
        }

        private ByteBuffer bytes(long offset, long size) throws IOException {
            if (offset < 0 || size < 0 || size > MAX_SECTION) {
                throw new IOException(file + " has a damaged ELF header");
            }
            ByteBuffer buffer = ByteBuffer.allocate((int) size).order(ByteOrder.LITTLE_ENDIAN);
            while (buffer.hasRemaining()) {
                if (channel.read(buffer, offset + buffer.position()) < 0) {
                    throw new EOFException(file + " ends inside its ELF headers");
                }
            }
            return buffer.flip();
        }

        private String string(ByteBuffer table, long offset) throws IOException {
            if (offset < 0 || offset >= table.limit()) {
                throw new IOException(file + " names a string outside its string table");
            }
            int end = (int) offset;
            while (end < table.limit() && table.get(end) != 0) {
                end++;
            }
            return new String(table.array(), (int) offset, end - (int) offset, StandardCharsets.UTF_8);
        }
    }
}
