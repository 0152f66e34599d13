package capture

import (
	"errors"
	"io"
	"io/fs"
	"os"

	"github.com/gopacket/gopacket/layers"
)

// Merge reads several capture sources as one stream of packets in timestamp
// order: the rotated files of one long capture (tcpdump -C / -G), or the
// captures of several hosts. At every step it returns the packet with the
// earliest timestamp among the next packets of all inputs; equal timestamps
// go in input order, and the packets of one input always keep their file
// order (an input whose timestamps step backwards is not reordered). The
// result depends only on the inputs and their order, so it is
// deterministic.
//
// Frame numbers are renumbered: [Packet.Frame] counts the packets in merged
// order from 1, every record of every input counting, as a Wireshark
// "merge chronologically" would number them. With a single input they are
// the file's own frame numbers. [Merge.Input] and [Merge.InputFrame] say
// where the last packet came from. [Packet.Interface] stays the interface
// id within its input; use [Merge.LinkType] for its link type.
//
// Packets are not copied: the returned Packet's Data and Payload alias the
// buffer of the input it came from and, as with [Source.Next], are valid
// until the next call to Next. Duplicates (the same segment captured on two
// hosts) are not removed.
//
// A Merge of files ([OpenMerge], [OpenMergeMapped]) keeps open only the
// inputs it is reading: each file is opened once to read its first
// packet's timestamp and closed again ("parked") until that packet is the
// earliest, and closed for good when it ends. The rotated files of one
// long capture are thus read one or two at a time, and memory does not
// grow with their number (it did by half a MiB of read buffer per file).
//
// A Merge is not safe for concurrent use.
type Merge struct {
	srcs  []*Source
	heads []Packet // next packet of each input not yet returned
	done  []bool   // input ended (io.EOF or an error)
	errs  []error  // the error an input ended with, nil for io.EOF
	heap  []int    // inputs with a head, ordered by (heads[i].TS, i)
	last  int      // input of the packet returned last; -1 before the first
	inFr  uint64   // its frame number in its input
	frame uint64
	err   error // sticky: io.EOF, the inputs' errors (joined when several), or ErrClosed
	init  bool
	// A Merge of files: how to open input i (paths[i]) again, whether it
	// is parked (closed, heads[i].TS its first packet's timestamp), and
	// what it was as it was first opened (for Name, Format and
	// InputLinkType while it is closed). An input that has ended is
	// closed and srcs[i] set to nil.
	open    func(string) (*Source, error)
	paths   []string
	parked  []bool
	formats []FileFormat
	links   []layers.LinkType
	mapped  bool
}

// NewMerge returns a Merge over srcs, in that order (the order breaks
// timestamp ties). Close closes every source.
func NewMerge(srcs ...*Source) *Merge {
	n := len(srcs)
	return &Merge{
		srcs:  srcs,
		heads: make([]Packet, n),
		done:  make([]bool, n),
		errs:  make([]error, n),
		heap:  make([]int, 0, n),
		last:  -1,
	}
}

// OpenMerge opens every path with [Open] and merges them. If one cannot be
// opened (an [fs.PathError]: missing, unreadable), the ones already open
// are closed and its error is returned. Of several paths, one that opens
// but holds no capture (empty, bad magic, a header cut short) is an input
// that ends at once with that error: the others are read, and Next returns
// it at the end, as it returns a damaged input's. A single path is opened with [OpenReadAhead] (a gzip file is decompressed
// in another goroutine); several are not, so that memory does not grow by
// a read-ahead per file. With several paths, each file is read up to its
// first packet, then closed until the Merge needs it (see [Merge]): its
// first packet, or the error reading it ends with, is read again then.
func OpenMerge(paths ...string) (*Merge, error) {
	if len(paths) == 1 {
		return openMerge(OpenReadAhead, paths)
	}
	return openMerge(Open, paths)
}

// OpenMergeMapped is [OpenMerge] with every file opened by [OpenMapped]:
// the caller takes on what OpenMapped says of files truncated while they
// are read, for every input ([Merge.Mapped]).
func OpenMergeMapped(paths ...string) (*Merge, error) {
	m, err := openMerge(OpenMapped, paths)
	if m != nil {
		m.mapped = true
	}
	return m, err
}

func openMerge(open func(string) (*Source, error), paths []string) (*Merge, error) {
	if len(paths) == 1 {
		s, err := open(paths[0])
		if err != nil {
			return nil, err
		}
		return NewMerge(s), nil
	}
	n := len(paths)
	m := NewMerge(make([]*Source, n)...)
	m.open, m.paths = open, paths
	m.parked = make([]bool, n)
	m.formats = make([]FileFormat, n)
	m.links = make([]layers.LinkType, n)
	m.init = true
	for i, p := range paths {
		// One input open at a time: read it as far as its first packet,
		// note what is needed of it, and park it until it is needed.
		// Only a regular file can be opened again: a pipe (standard
		// input, a process substitution) stays open.
		s, err := open(p)
		if err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				// Missing or unreadable: the caller's mistake.
				_ = m.Close()
				return nil, err
			}
			// Readable but no capture (an empty last file of a
			// rotated capture, bad magic, a header cut short): the
			// input ends at once with its error, as a damaged one
			// does, and the others are read.
			m.done[i] = true
			m.errs[i] = err
			continue
		}
		m.srcs[i] = s
		m.formats[i] = formatOf(s)
		ok := m.fill(i)
		m.links[i] = s.LinkType(0) // a pcapng file's first interface is known now
		if ok {
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && p != "-" {
				m.park(i)
			}
			m.push(i)
		}
	}
	return m, nil
}

// park closes input i, whose first packet was read into heads[i]: only
// its timestamp is kept, for the order.
func (m *Merge) park(i int) {
	_ = m.srcs[i].Close()
	m.srcs[i] = nil
	m.parked[i] = true
	m.heads[i] = Packet{TS: m.heads[i].TS}
}

// unpark opens parked input i again and reads its first packet into
// heads[i]; false when that fails (the file changed or went away since:
// the input then ends with the error).
func (m *Merge) unpark(i int) bool {
	m.parked[i] = false
	s, err := m.open(m.paths[i])
	if err != nil {
		m.done[i] = true
		m.errs[i] = err
		return false
	}
	m.srcs[i] = s
	return m.fill(i)
}

// Len returns the number of inputs.
func (m *Merge) Len() int { return len(m.srcs) }

// Source returns input i; nil for an input of a merge of several files
// that is not open at the moment (see [Merge]).
func (m *Merge) Source(i int) *Source { return m.srcs[i] }

// Name returns the name of input i: its path, for a merge of files.
func (m *Merge) Name(i int) string {
	if m.paths != nil {
		return m.paths[i]
	}
	return m.srcs[i].Name()
}

// InputLinkType returns the link type of interface 0 of input i, as its
// file begins (for pcapng, as its first packet was read).
func (m *Merge) InputLinkType(i int) layers.LinkType {
	if m.links != nil {
		return m.links[i]
	}
	return m.srcs[i].LinkType(0)
}

// Mapped reports whether the inputs may be read from memory mappings
// ([OpenMapped], [OpenMergeMapped]): touching a packet's octets then faults
// if its file is truncated meanwhile.
func (m *Merge) Mapped() bool {
	return m.mapped || (len(m.srcs) == 1 && m.srcs[0] != nil && m.srcs[0].Mapped())
}

// Input returns the index of the input the packet last returned by Next
// came from (-1 before the first).
func (m *Merge) Input() int { return m.last }

// InputFrame returns the frame number that the packet last returned by Next
// has in its own input (0 before the first).
func (m *Merge) InputFrame() uint64 { return m.inFr }

// LinkType returns the link type of interface iface of the input the
// packet last returned by Next came from, as [Source.LinkType] does for one
// file: pass the packet's Interface. Before the first packet it answers for
// the first input.
func (m *Merge) LinkType(iface int) layers.LinkType {
	i := m.last
	if i < 0 {
		i = 0
	}
	if i >= len(m.srcs) {
		return LinkTypeUnknown
	}
	if m.srcs[i] == nil {
		// Not open (a merge of files): only interface 0 is known.
		if iface == 0 {
			return m.links[i]
		}
		return LinkTypeUnknown
	}
	return m.srcs[i].LinkType(iface)
}

// Next returns the next packet in timestamp order. When every input has
// ended it returns io.EOF, or, when an input ended with an error (a damaged
// file: a *FileError), that error; when several did, their errors joined
// (errors.Join) in input order. A damaged input
// thus still delivers every intact packet, and the other inputs go on to
// their end, before the error is reported. The end, io.EOF or the error, is
// sticky. [Merge.NextInto] does the same without copying the Packet.
func (m *Merge) Next() (Packet, error) {
	var p Packet
	err := m.NextInto(&p)
	return p, err
}

// NextInto is [Merge.Next] filling *p (every field) instead of returning a
// Packet, as [Source.NextInto] does. On an error *p is zeroed.
func (m *Merge) NextInto(p *Packet) error {
	if m.err != nil {
		*p = Packet{}
		return m.err
	}
	if len(m.srcs) == 1 {
		// One input: no heap, no copy through heads.
		if err := m.srcs[0].NextInto(p); err != nil {
			m.done[0] = true
			m.err = err
			if err != io.EOF {
				m.errs[0] = err
			}
			return m.err
		}
		m.last, m.inFr = 0, p.Frame
		m.frame++
		p.Frame = m.frame
		return nil
	}
	if !m.init {
		m.init = true
		for i := range m.srcs {
			if m.fill(i) {
				m.push(i)
			}
		}
	} else if m.last >= 0 && m.fill(m.last) {
		// The input whose packet was returned last has been popped; its
		// previous packet is no longer in use, so it may read on. Its
		// next packet is most often the earliest again (the files of a
		// rotated capture are read one after the other): then it goes
		// out without a trip through the heap.
		if len(m.heap) == 0 || m.less(m.last, m.heap[0]) {
			return m.out(p, m.last)
		}
		m.push(m.last)
	}
	var i int
	for {
		if len(m.heap) == 0 {
			m.err = io.EOF
			var errs []error
			for _, e := range m.errs {
				if e != nil {
					errs = append(errs, e)
				}
			}
			switch len(errs) {
			case 0:
			case 1:
				m.err = errs[0]
			default:
				// Every damaged input is named, in input order.
				m.err = errors.Join(errs...)
			}
			*p = Packet{}
			return m.err
		}
		i = m.pop()
		if m.parked == nil || !m.parked[i] {
			break
		}
		// Its first packet is the earliest: open it again, read that
		// packet, and order it once more.
		if m.unpark(i) {
			m.push(i)
		}
	}
	return m.out(p, i)
}

// out hands the head of input i to the caller.
func (m *Merge) out(p *Packet, i int) error {
	m.last = i
	*p = m.heads[i]
	// An offset in one of several files: for ReadAt, the input rides in
	// the high bits (a merge of files only).
	if pos := p.PayloadPos; pos > 0 && pos < 1<<posInputShift && m.paths != nil && i < maxPosInputs {
		p.PayloadPos = int64(i+1)<<posInputShift | pos
	} else {
		p.PayloadPos = 0
	}
	m.inFr = p.Frame
	m.frame++
	p.Frame = m.frame
	return nil
}

// A merged packet's PayloadPos is (input+1)<<posInputShift | offset: files
// up to 1 TiB, and up to maxPosInputs inputs (the others' packets have no
// PayloadPos).
const (
	posInputShift = 40
	maxPosInputs  = 1<<(63-posInputShift) - 1
)

// ReadAt reads the file of the input a merged packet's PayloadPos names, at
// the offset it gives (io.ReaderAt), as Source.ReadAt does for one file.
// An input that has ended is opened again for it. Only a merge of files
// gives its packets a PayloadPos; ReadAt fails with ErrNotSeekable for any
// other position.
func (m *Merge) ReadAt(b []byte, pos int64) (int, error) {
	if len(m.srcs) == 1 && m.srcs[0] != nil {
		return m.srcs[0].ReadAt(b, pos)
	}
	i, off := int(pos>>posInputShift)-1, pos&(1<<posInputShift-1)
	if m.paths == nil || i < 0 || i >= len(m.srcs) || pos <= 0 {
		return 0, ErrNotSeekable
	}
	if s := m.srcs[i]; s != nil && !m.parked[i] {
		return s.ReadAt(b, off)
	}
	f, err := os.Open(m.paths[i])
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return f.ReadAt(b, off)
}

// fill reads the next packet of input i into heads[i]; false when the input
// has ended.
func (m *Merge) fill(i int) bool {
	if m.done[i] {
		return false
	}
	if err := m.srcs[i].NextInto(&m.heads[i]); err != nil {
		m.done[i] = true
		if err != io.EOF {
			m.errs[i] = err
		}
		if m.paths != nil {
			// A merge of files: an input that has ended is closed.
			_ = m.srcs[i].Close()
			m.srcs[i] = nil
		}
		return false
	}
	return true
}

// less orders inputs by their head's timestamp, then by input index.
func (m *Merge) less(a, b int) bool {
	ta, tb := m.heads[a].TS, m.heads[b].TS
	if ta.Equal(tb) {
		return a < b
	}
	return ta.Before(tb)
}

// push adds input i to the heap (a binary min-heap on less).
func (m *Merge) push(i int) {
	h := append(m.heap, i)
	j := len(h) - 1
	for j > 0 {
		parent := (j - 1) / 2
		if !m.less(h[j], h[parent]) {
			break
		}
		h[j], h[parent] = h[parent], h[j]
		j = parent
	}
	m.heap = h
}

// pop removes and returns the input with the earliest head.
func (m *Merge) pop() int {
	h := m.heap
	top := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h = h[:n]
	j := 0
	for {
		l := 2*j + 1
		if l >= n {
			break
		}
		c := l
		if r := l + 1; r < n && m.less(h[r], h[l]) {
			c = r
		}
		if !m.less(h[c], h[j]) {
			break
		}
		h[j], h[c] = h[c], h[j]
		j = c
	}
	m.heap = h
	return top
}

// Close closes every input and returns the first error. Later calls to Next
// return ErrClosed. Close is idempotent.
func (m *Merge) Close() error {
	m.err = ErrClosed
	var first error
	for i, s := range m.srcs {
		if s == nil {
			continue
		}
		if err := s.Close(); err != nil && first == nil {
			first = err
		}
		if m.paths != nil {
			m.srcs[i] = nil
		}
	}
	return first
}

// FileFormat describes how an input file is stored, so that a tool writing
// its packets back out (a split by connection) can keep its format.
type FileFormat struct {
	// Pcapng is set for pcapng files, clear for classic pcap.
	Pcapng bool
	// Nanos is set for pcap files with nanosecond timestamps (magic
	// a1b23c4d); pcapng resolutions are per interface and not reported.
	Nanos bool
}

// Format returns how input i's file is stored.
func (m *Merge) Format(i int) FileFormat {
	if m.formats != nil {
		return m.formats[i]
	}
	return formatOf(m.srcs[i])
}

func formatOf(s *Source) FileFormat {
	switch r := s.rd.(type) {
	case *pcapReader:
		return FileFormat{Nanos: r.nanos}
	case *ngReader:
		return FileFormat{Pcapng: true}
	}
	return FileFormat{}
}
