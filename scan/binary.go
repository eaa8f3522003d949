package scan

import (
	"bytes"
	"encoding/binary"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/pack"
)

// executableKind names the executable format data starts with, or "".
func executableKind(data []byte) string {
	switch {
	case bytes.HasPrefix(data, []byte("\x7fELF")):
		return "an ELF executable"
	case len(data) >= 4 && (bytes.HasPrefix(data, []byte{0xfe, 0xed, 0xfa, 0xce}) || bytes.HasPrefix(data, []byte{0xfe, 0xed, 0xfa, 0xcf}) ||
		bytes.HasPrefix(data, []byte{0xce, 0xfa, 0xed, 0xfe}) || bytes.HasPrefix(data, []byte{0xcf, 0xfa, 0xed, 0xfe})):
		return "a Mach-O executable"
	case bytes.HasPrefix(data, []byte{0xca, 0xfe, 0xba, 0xbe}) && len(data) >= 8:
		// Mach-O universal binaries and Java classes share a magic; the
		// next word tells them apart (a small count of architectures, or
		// a class file version of 45 and up).
		if n := binary.BigEndian.Uint32(data[4:8]); n > 0 && n < 45 {
			return "a Mach-O universal executable"
		}
		return "a Java class file"
	case bytes.HasPrefix(data, []byte("MZ")) && len(data) >= 0x40:
		off := int(binary.LittleEndian.Uint32(data[0x3c:0x40]))
		if off > 0 && off+4 <= len(data) && bytes.Equal(data[off:off+4], []byte("PE\x00\x00")) {
			return "a Windows PE executable"
		}
	case bytes.HasPrefix(data, []byte("\x00asm")):
		return "a WebAssembly module"
	}
	return ""
}

func binaryCheck(_ *unit, f pack.File, _ bool) []skilld.Finding {
	if k := executableKind(f.Data); k != "" {
		return []skilld.Finding{{Message: "the package holds " + k + ", which cannot be reviewed as text"}}
	}
	return nil
}

// archiveKind names the archive format data starts with, or "".
func archiveKind(data []byte) string {
	switch {
	case bytes.HasPrefix(data, []byte("PK\x03\x04")), bytes.HasPrefix(data, []byte("PK\x05\x06")):
		return "zip"
	case bytes.HasPrefix(data, []byte{0x1f, 0x8b}):
		return "gzip"
	case bytes.HasPrefix(data, []byte("7z\xbc\xaf\x27\x1c")):
		return "7z"
	case bytes.HasPrefix(data, []byte("Rar!\x1a\x07")):
		return "rar"
	case bytes.HasPrefix(data, []byte("BZh")) && len(data) > 3 && data[3] >= '1' && data[3] <= '9':
		return "bzip2"
	case bytes.HasPrefix(data, []byte("\xfd7zXZ\x00")):
		return "xz"
	case bytes.HasPrefix(data, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		return "zstd"
	case len(data) >= 262 && bytes.Equal(data[257:262], []byte("ustar")):
		return "tar"
	}
	return ""
}

var archiveExt = map[string]string{"zip": "zip", "tar": "tar", "tgz": "tar.gz", "gz": "gzip", "7z": "7z", "rar": "rar",
	"bz2": "bzip2", "xz": "xz", "zst": "zstd", "jar": "jar", "whl": "wheel", "war": "war", "skill": "skill archive"}

// documentExt are formats that are zip files inside but documents to a
// reader (Office Open XML, OpenDocument, EPUB): assets and templates
// skills use, not archives they unpack.
var documentExt = map[string]bool{"docx": true, "xlsx": true, "pptx": true, "docm": true, "xlsm": true, "pptm": true,
	"dotx": true, "potx": true, "xltx": true, "odt": true, "ods": true, "odp": true, "epub": true}

func archiveCheck(_ *unit, f pack.File, _ bool) []skilld.Finding {
	if executableKind(f.Data) != "" || documentExt[ext(f.Path)] {
		return nil
	}
	k := archiveKind(f.Data)
	if k == "" {
		k = archiveExt[ext(f.Path)]
	}
	if k == "" {
		return nil
	}
	return []skilld.Finding{{Message: "the package holds a " + k + " archive; what it holds is not scanned"}}
}
