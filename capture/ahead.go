package capture

import (
	"bufio"
	"io"
)

// Read-ahead for compressed files (OpenReadAhead): a goroutine decompresses
// the next blocks of the file while the caller decodes the current one, so
// that a .pcap.gz takes about the time of its decompression rather than
// that plus the decode. The blocks are handed over, not copied: a pcap
// record is read in place from its block, as from a bufio buffer; only a
// record that straddles two blocks is copied, into the headroom in front of
// the next block.
//
// An uncompressed file is not read ahead. Measured on the issue 6 workload
// (512 MiB, 2-core VM), moving its read(2) to another goroutine made the
// decode itself about 0.1 s slower, since every octet then came from the
// other core's cache: -q took 0.74 s against 0.71 s, over 9 interleaved
// rounds, with 0.10 s more CPU.
const (
	aheadBlocks = 3 // one being decoded, one ready, one being filled
	// aheadHeadroom holds the tail of a block that a Peek joins to the
	// next. That tail is shorter than the Peek, and a Peek is at most a
	// record: its header and MaxRecordLength octets.
	aheadHeadroom = pcapRecordHdrSize + MaxRecordLength
)

// aheadBlock is a block the reading goroutine filled: n octets from
// aheadHeadroom on, then the read's error (io.EOF at the end of the file).
type aheadBlock struct {
	b   []byte
	n   int
	err error
}

// aheadPeeker is the peeker of the read-ahead. Like a Source, it is not
// safe for concurrent use; its goroutine touches only the blocks it was
// given and the reader it reads.
type aheadPeeker struct {
	full chan aheadBlock // filled blocks, in file order
	free chan []byte     // blocks for the goroutine to fill
	stop chan struct{}   // closed by close
	done chan struct{}   // closed when the goroutine has returned
	cur  []byte          // the current block: cur[r:w] is unread
	r, w int
	err  error // the error after cur's octets (sticky)
}

// newAheadPeeker starts reading src ahead in blocks of size octets.
func newAheadPeeker(src io.Reader, size int) *aheadPeeker {
	a := &aheadPeeker{
		full: make(chan aheadBlock, aheadBlocks),
		free: make(chan []byte, aheadBlocks),
		stop: make(chan struct{}),
		done: make(chan struct{}),
	}
	for range aheadBlocks {
		a.free <- make([]byte, aheadHeadroom+size)
	}
	go a.fill(src)
	return a
}

// fill is the reading goroutine: it fills free blocks until an error (io.EOF
// at the end) or close. A block is handed over full, which only a regular
// file's reads never wait for: a pipe's records would wait for the octets
// after them (tcpdump -U -w - | iwarpdump -l -r -), so open reads no other
// file ahead (TestStream).
func (a *aheadPeeker) fill(src io.Reader) {
	defer close(a.done)
	for {
		var b []byte
		select {
		case b = <-a.free:
		case <-a.stop:
			return
		}
		// Not io.ReadFull: it would turn an io.EOF after a short block
		// into io.ErrUnexpectedEOF, and that is what a gzip stream cut
		// short returns itself.
		n, err := 0, error(nil)
		for n < len(b)-aheadHeadroom && err == nil {
			var k int
			k, err = src.Read(b[aheadHeadroom+n:])
			n += k
		}
		a.full <- aheadBlock{b, n, err} // never waits: there are aheadBlocks slots
		if err != nil {
			return
		}
	}
}

// close stops the goroutine and waits for it: it finishes the read it is
// in (a regular file's read returns), then sees stop. close is idempotent.
func (a *aheadPeeker) close() {
	select {
	case <-a.stop:
	default:
		close(a.stop)
	}
	<-a.done
}

// next makes the next block current, with the unread octets of the current
// one moved into its headroom (fewer than aheadHeadroom: see Peek). It
// returns false when there is no next block; a.err says why.
func (a *aheadPeeker) next() bool {
	if a.err != nil {
		return false
	}
	nb := <-a.full
	left := a.cur[a.r:a.w]
	start := aheadHeadroom - len(left)
	copy(nb.b[start:aheadHeadroom], left)
	if a.cur != nil {
		// The caller's last record, if it was in this block, is no
		// longer valid: Packet.Data lasts until the next call.
		a.free <- a.cur
	}
	a.cur, a.r, a.w, a.err = nb.b, start, aheadHeadroom+nb.n, nb.err
	return true
}

// Peek returns the next n octets without consuming them, as
// bufio.Reader.Peek does: with fewer, the error says why (io.EOF, the
// reader's error, or bufio.ErrBufferFull for n above aheadHeadroom). The
// octets are valid until the next call.
func (a *aheadPeeker) Peek(n int) ([]byte, error) {
	if n < 0 {
		return nil, bufio.ErrNegativeCount
	}
	for a.w-a.r < n {
		if n > aheadHeadroom {
			return a.cur[a.r:a.w], bufio.ErrBufferFull
		}
		if !a.next() {
			return a.cur[a.r:a.w], a.err
		}
	}
	return a.cur[a.r : a.r+n], nil
}

// Discard skips the next n octets, as bufio.Reader.Discard does.
func (a *aheadPeeker) Discard(n int) (int, error) {
	if n < 0 {
		return 0, bufio.ErrNegativeCount
	}
	d := 0
	for {
		k := min(n-d, a.w-a.r)
		a.r += k
		d += k
		if d == n {
			return d, nil
		}
		if !a.next() {
			return d, a.err
		}
	}
}

// Buffered returns the number of octets Peek returns without waiting.
func (a *aheadPeeker) Buffered() int { return a.w - a.r }

// Read is io.Reader's Read, for the pcapng reader's bufio.Reader: it
// copies.
func (a *aheadPeeker) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for a.w == a.r {
		if !a.next() {
			return 0, a.err
		}
	}
	n := copy(p, a.cur[a.r:a.w])
	a.r += n
	return n, nil
}
