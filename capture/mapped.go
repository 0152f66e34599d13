//go:build unix

package capture

import (
	"bufio"
	"io"
	"math"
	"os"

	"golang.org/x/sys/unix"
)

// mapWindow is how far the pages of a mapped file are kept behind the
// reader, and the step in which they are released: the resident memory of
// a mapped file stays within a few windows, whatever its size.
const mapWindow = 1 << 20

// mappedPeeker is the peeker of a file mapped into memory (OpenMapped):
// Peek returns the file's own pages, so no octet is copied, and there is
// no read(2) whose copy out of the page cache took about a fifth of a
// one-worker decode. The pages behind the reader are released
// (MADV_DONTNEED: a shared file mapping reads them back from the file if
// they are touched again).
type mappedPeeker struct {
	m     []byte
	r     int // the next unread octet
	freed int // m[:freed] has been released
}

// mapFile maps the regular file f, or returns nil: an empty file, one too
// large for the address space, or a mapping the system refuses (the file
// is then read).
func mapFile(f *os.File) *mappedPeeker {
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() <= 0 || fi.Size() > math.MaxInt {
		return nil
	}
	m, err := unix.Mmap(int(f.Fd()), 0, int(fi.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil
	}
	_ = unix.Madvise(m, unix.MADV_SEQUENTIAL) // read ahead, drop behind
	return &mappedPeeker{m: m}
}

// unmap releases the mapping: no octet Peek returned may be touched after.
func (p *mappedPeeker) unmap() {
	if p.m != nil {
		_ = unix.Munmap(p.m)
		p.m, p.r, p.freed = nil, 0, 0
	}
}

// Peek returns the next n octets, as bufio.Reader.Peek does: with fewer,
// io.EOF. They stay valid until the pages are released, two windows on.
func (p *mappedPeeker) Peek(n int) ([]byte, error) {
	if n < 0 {
		return nil, bufio.ErrNegativeCount
	}
	if p.r > p.freed+2*mapWindow {
		p.release()
	}
	if n > len(p.m)-p.r {
		return p.m[p.r:], io.EOF
	}
	return p.m[p.r : p.r+n], nil
}

// release gives back the pages more than a window behind the reader.
func (p *mappedPeeker) release() {
	end := (p.r - mapWindow) &^ (mapWindow - 1)
	if end > p.freed {
		_ = unix.Madvise(p.m[p.freed:end], unix.MADV_DONTNEED)
		p.freed = end
	}
}

// Discard skips the next n octets, as bufio.Reader.Discard does.
func (p *mappedPeeker) Discard(n int) (int, error) {
	if n < 0 {
		return 0, bufio.ErrNegativeCount
	}
	if n > len(p.m)-p.r {
		n = len(p.m) - p.r
		p.r += n
		return n, io.EOF
	}
	p.r += n
	return n, nil
}

// Buffered returns the octets up to the end of the next window: the
// pcap reader reads the records in them without a Peek, and the Peek it
// makes after them releases the pages behind.
func (p *mappedPeeker) Buffered() int {
	return min(len(p.m), (p.r/mapWindow+2)*mapWindow) - p.r
}

// Read copies the next octets into b: pcapgo reads the pcapng blocks
// other than Enhanced Packet Blocks this way (ngReader).
func (p *mappedPeeker) Read(b []byte) (int, error) {
	if p.r >= len(p.m) {
		return 0, io.EOF
	}
	n := copy(b, p.m[p.r:])
	p.r += n
	return n, nil
}

// Size returns the most octets Peek can return: the whole file.
func (p *mappedPeeker) Size() int { return len(p.m) }

// readAt copies the octets at offset off into b if the mapping still holds
// them in memory (not released, within the file), without a system call.
func (p *mappedPeeker) readAt(b []byte, off int64) bool {
	if off < int64(p.freed) || off > int64(len(p.m)-len(b)) {
		return false
	}
	copy(b, p.m[off:])
	return true
}
