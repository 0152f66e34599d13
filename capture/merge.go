package capture

import (
	"io"

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
	err   error // sticky: io.EOF, the first input's error, or ErrClosed
	init  bool
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
// opened, the ones already open are closed and its error is returned. A
// single path is opened with [OpenReadAhead] (a gzip file is decompressed
// in another goroutine); several are not, so that memory does not grow by
// a read-ahead per file.
func OpenMerge(paths ...string) (*Merge, error) {
	srcs := make([]*Source, 0, len(paths))
	open := Open
	if len(paths) == 1 {
		open = OpenReadAhead
	}
	for _, p := range paths {
		s, err := open(p)
		if err != nil {
			for _, o := range srcs {
				_ = o.Close()
			}
			return nil, err
		}
		srcs = append(srcs, s)
	}
	return NewMerge(srcs...), nil
}

// Len returns the number of inputs.
func (m *Merge) Len() int { return len(m.srcs) }

// Source returns input i.
func (m *Merge) Source(i int) *Source { return m.srcs[i] }

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
	return m.srcs[i].LinkType(iface)
}

// Next returns the next packet in timestamp order. When every input has
// ended it returns io.EOF, or, when an input ended with an error (a damaged
// file: a *FileError), the error of the first such input. A damaged input
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
		// previous packet is no longer in use, so it may read on.
		m.push(m.last)
	}
	if len(m.heap) == 0 {
		m.err = io.EOF
		for _, e := range m.errs {
			if e != nil {
				m.err = e
				break
			}
		}
		*p = Packet{}
		return m.err
	}
	i := m.pop()
	m.last = i
	*p = m.heads[i]
	p.PayloadPos = 0 // an offset in one of several files
	m.inFr = p.Frame
	m.frame++
	p.Frame = m.frame
	return nil
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
	for _, s := range m.srcs {
		if err := s.Close(); err != nil && first == nil {
			first = err
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
	switch r := m.srcs[i].rd.(type) {
	case *pcapReader:
		return FileFormat{Nanos: r.nanos}
	case *ngReader:
		return FileFormat{Pcapng: true}
	}
	return FileFormat{}
}
