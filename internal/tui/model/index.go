package model

import (
	"net/netip"
	"sort"
	"sync"
	"time"
	"unsafe"

	"github.com/iwarpkit/iwarpkit/dissect"
	"github.com/iwarpkit/iwarpkit/dissect/mpa"
	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/format"
)

// EntryFlags are per-record facts the list needs without decoding.
type EntryFlags uint8

// Entry flags.
const (
	// FlagListed: the record gets a row in the default list. RDMA
	// message records whose line would repeat their single FPDU's are not
	// listed (format.ShowMessageInText); the ladder shows every message.
	FlagListed EntryFlags = 1 << iota
	// FlagFindings: the record is a finding or carries findings.
	FlagFindings
	// FlagLate: the record came after a record of a later frame. Records
	// are in frame order but for those docs/jsonl.md lists: the first
	// records of a direction framed late (mpa.midstream_lock), a message
	// completed after the records held behind it overflowed, the conn
	// record of a CM exchange or an SCTP association.
	FlagLate
)

// Entry is the fixed-size part of an indexed record (24 octets).
type Entry struct {
	Frame uint64 // frame holding the record's first octet
	pos   uint64 // arena chunk << 32 | offset
	Conn  int32
	Type  flows.RecordType
	Kind  Kind
	Dir   flows.Dir
	Flags EntryFlags
}

// ConnInfo is one row of the connection table (iwarpdump -z conn): what
// the index knows of a connection, and its summary once the decoder closed
// it (RFC 5044 §7.1 parameters, counts).
type ConnInfo struct {
	ID         int
	A, B       netip.AddrPort // endpoints of the first record seen
	Records    int
	FirstFrame uint64
	LastFrame  uint64
	Summary    *flows.ConnSummary // nil while the connection is open

	// Counted while indexing (the summary has the decoder's own counts).
	FPDUs, Messages, Findings, CRCErrors int
	Octets                               uint64
	// From the MPA Request and Reply seen (RFC 5044 §7.1): revision, CRC
	// (either C bit) and markers per direction (the Request's M bit asks
	// for markers towards the initiator, the Reply's towards the responder).
	HaveRequest, HaveReply bool
	Rev                    uint8
	CRC                    bool
	MarkersI2R, MarkersR2I bool
	Rejected               bool
}

// FindingRef locates one finding: a finding record, or finding Sub of a
// record's attached findings.
type FindingRef struct {
	Rec      int
	Sub      int // -1 for a finding record
	Frame    uint64
	Severity dissect.Severity
}

// Progress reports how far indexing has come.
type Progress struct {
	Read, Total int64 // octets of the file read, and its size (0: unknown)
	Frames      uint64
	Done        bool
	Err         error // a damaged file, when Done
	// SnapHidden, when Done: the TCP connections the capture's snap
	// length left unknown, iWARP or not (flows.Decoder.SnapHidden).
	SnapHidden int
	Elapsed    time.Duration
}

// Fraction returns the part of the file indexed, 0 to 1.
func (p Progress) Fraction() float64 {
	switch {
	case p.Done:
		return 1
	case p.Total <= 0:
		return 0
	}
	f := float64(p.Read) / float64(p.Total)
	return min(max(f, 0), 1)
}

const (
	arenaChunk = 1 << 20
	entryChunk = 1 << 14
	cacheSize  = 1024
)

// Index is the compact, append-only store of a capture's records. One
// goroutine appends (Add) while others read; every method is safe for
// concurrent use.
type Index struct {
	mu       sync.RWMutex
	entries  [][]Entry
	n        int
	arena    [][]byte
	codec    codec
	conns    []ConnInfo
	findings []FindingRef
	prog     Progress
	scratch  []byte
	version  uint64    // bumped by every change readers may care about
	first    time.Time // the first packet's time (-t r counts from it)

	// The records out of frame order (FlagLate), in index order, and for
	// each the highest frame of the records before it (maxFrame then).
	late     []int32
	lateMax  []uint64
	maxFrame uint64

	cmu   sync.Mutex
	cache map[int]*flows.Record
	ring  [cacheSize]int
	ringN int
}

// NewIndex returns an empty Index.
func NewIndex() *Index {
	return &Index{codec: newCodec(), cache: make(map[int]*flows.Record, cacheSize)}
}

// Add appends records, in the order the decoder emitted them.
func (x *Index) Add(recs ...*flows.Record) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, r := range recs {
		x.add(r)
	}
	x.version++
}

func (x *Index) add(r *flows.Record) {
	b := x.codec.encode(x.scratch[:0], r)
	x.scratch = b
	if len(x.arena) == 0 || len(x.arena[len(x.arena)-1])+len(b) > cap(x.arena[len(x.arena)-1]) {
		x.arena = append(x.arena, make([]byte, 0, max(arenaChunk, len(b))))
	}
	ci := len(x.arena) - 1
	pos := uint64(ci)<<32 | uint64(len(x.arena[ci]))
	x.arena[ci] = append(x.arena[ci], b...)

	e := Entry{Frame: r.Frame, pos: pos, Conn: int32(r.Conn), Type: r.Type, Kind: KindOf(r), Dir: r.Dir}
	if r.Type != flows.RecMessage || format.ShowMessageInText(r.Message) {
		e.Flags |= FlagListed
	}
	i := x.n
	if e.Frame < x.maxFrame {
		e.Flags |= FlagLate
		x.late = append(x.late, int32(i))
		x.lateMax = append(x.lateMax, x.maxFrame)
	} else {
		x.maxFrame = e.Frame
	}
	switch fs := attached(r); {
	case r.Type == flows.RecFinding && r.Finding != nil:
		e.Flags |= FlagFindings
		x.findings = append(x.findings, FindingRef{Rec: i, Sub: -1, Frame: r.Frame, Severity: r.Finding.Severity})
	case len(fs) > 0:
		e.Flags |= FlagFindings
		for j, f := range fs {
			x.findings = append(x.findings, FindingRef{Rec: i, Sub: j, Frame: r.Frame, Severity: f.Severity})
		}
	}
	if len(x.entries) == 0 || len(x.entries[len(x.entries)-1]) == entryChunk {
		x.entries = append(x.entries, make([]Entry, 0, entryChunk))
	}
	x.entries[len(x.entries)-1] = append(x.entries[len(x.entries)-1], e)
	x.n++
	x.noteConn(r)
}

// attached returns the findings an MPA, FPDU, CM or SCTP record carries.
func attached(r *flows.Record) []dissect.Finding {
	switch {
	case r.Type == flows.RecMPA && r.MPA != nil:
		return r.MPA.Findings
	case r.Type == flows.RecFPDU && r.FPDU != nil:
		return r.FPDU.Findings
	case r.Type == flows.RecCM && r.CM != nil:
		return r.CM.Findings
	case (r.Type == flows.RecDDPSCTP || r.Type == flows.RecSCTPSession) && r.SCTP != nil:
		return r.SCTP.Findings
	}
	return nil
}

func (x *Index) noteConn(r *flows.Record) {
	if r.Conn < 0 || r.Conn > 1<<24 {
		return
	}
	for len(x.conns) <= r.Conn {
		x.conns = append(x.conns, ConnInfo{ID: len(x.conns)})
	}
	c := &x.conns[r.Conn]
	if c.Records == 0 || r.Frame < c.FirstFrame {
		c.FirstFrame = r.Frame
	}
	if !c.A.IsValid() && r.Src.IsValid() && r.Dst.IsValid() {
		c.A, c.B = r.Src, r.Dst
	}
	c.Records++
	c.LastFrame = max(c.LastFrame, r.Frame)
	c.Findings += len(attached(r))
	switch r.Type {
	case flows.RecFPDU:
		c.FPDUs++
		c.Octets += uint64(r.FPDU.Len)
		if r.FPDU.CRCStatus == flows.CRCBad {
			c.CRCErrors++
		}
	case flows.RecMessage:
		c.Messages++
	case flows.RecFinding:
		c.Findings++
	case flows.RecMPA:
		f := r.MPA.Frame
		c.Rev = f.Rev
		c.CRC = c.CRC || f.C
		if f.Kind == mpa.KindReply {
			c.HaveReply = true
			c.MarkersI2R = f.M
			c.Rejected = f.R
		} else {
			c.HaveRequest = true
			c.MarkersR2I = f.M
		}
	}
	if r.Type == flows.RecConn && r.Summary != nil {
		c.Summary = r.Summary
		if r.Summary.InitiatorKnown {
			c.A, c.B = r.Summary.Initiator, r.Summary.Responder
		}
	}
}

// SetProgress records how far the reader has come.
func (x *Index) SetProgress(p Progress) {
	x.mu.Lock()
	x.prog = p
	x.version++
	x.mu.Unlock()
}

// SetFirst records the time of the capture's first packet, which relative
// times (-t r, tshark's frame.time_relative) count from; only the first
// call counts.
func (x *Index) SetFirst(t time.Time) {
	x.mu.Lock()
	if x.first.IsZero() {
		x.first = t
		x.version++
	}
	x.mu.Unlock()
}

// First returns the time of the capture's first packet (zero until
// SetFirst).
func (x *Index) First() time.Time {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.first
}

// Progress returns the latest progress report.
func (x *Index) Progress() Progress {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.prog
}

// Version changes whenever records or progress change.
func (x *Index) Version() uint64 {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.version
}

// Len returns the number of records indexed so far.
func (x *Index) Len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.n
}

// Entry returns the fixed part of record i.
func (x *Index) Entry(i int) Entry {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.entries[i/entryChunk][i%entryChunk]
}

// Entries calls fn for the records from..to-1 under one lock; fn must not
// call back into x.
func (x *Index) Entries(from, to int, fn func(i int, e *Entry)) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	to = min(to, x.n)
	for i := max(from, 0); i < to; i++ {
		fn(i, &x.entries[i/entryChunk][i%entryChunk])
	}
}

// Record decodes record i. The result is shared with other callers (a
// small cache keeps recent ones): it must not be modified.
func (x *Index) Record(i int) *flows.Record {
	x.cmu.Lock()
	if r, ok := x.cache[i]; ok {
		x.cmu.Unlock()
		return r
	}
	x.cmu.Unlock()
	x.mu.RLock()
	if i < 0 || i >= x.n {
		x.mu.RUnlock()
		return nil
	}
	e := x.entries[i/entryChunk][i%entryChunk]
	chunk := x.arena[e.pos>>32]
	r, _ := x.codec.decode(chunk[uint32(e.pos):])
	x.mu.RUnlock()
	x.cmu.Lock()
	if old := x.ring[x.ringN%cacheSize]; x.ringN >= cacheSize {
		delete(x.cache, old)
	}
	x.ring[x.ringN%cacheSize] = i
	x.ringN++
	x.cache[i] = r
	x.cmu.Unlock()
	return r
}

// decode decodes record i without the cache (for scans that touch every
// record once).
func (x *Index) decode(i int) *flows.Record {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if i < 0 || i >= x.n {
		return nil
	}
	e := x.entries[i/entryChunk][i%entryChunk]
	r, _ := x.codec.decode(x.arena[e.pos>>32][uint32(e.pos):])
	return r
}

// AtFrame returns the first record of frame f or, when f has none, the
// first record of the nearest frame after it (Len when there is none).
// Late records (FlagLate) are found too.
func (x *Index) AtFrame(f uint64) int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.atFrame(x.n, func(i int) int { return i }, f)
}

// AtFrameOf is AtFrame over a subset of the records: recs(i) for i in
// 0..n-1, ascending record indexes below Len. It returns the position in
// the subset (n when none).
func (x *Index) AtFrameOf(n int, recs func(i int) int, f uint64) int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.atFrame(n, recs, f)
}

// atFrame does AtFrameOf's work under x.mu. The records in order have
// non-decreasing frames but for the late ones, so the highest frame so
// far (a late record's lateMax) is non-decreasing over any subset: a
// binary search finds the first record in order of frame f or after, and
// the late records, few, are looked through for a nearer frame.
func (x *Index) atFrame(n int, recs func(i int) int, f uint64) int {
	entry := func(rec int) *Entry { return &x.entries[rec/entryChunk][rec%entryChunk] }
	best := sort.Search(n, func(i int) bool {
		rec := recs(i)
		if e := entry(rec); e.Flags&FlagLate == 0 {
			return e.Frame >= f
		}
		j := sort.Search(len(x.late), func(j int) bool { return int(x.late[j]) >= rec })
		return x.lateMax[j] >= f
	})
	// The record at best (if any) is not late: a late one's highest frame
	// before it is its predecessor's, below f. Late records before best
	// have frames below f too; those after it may be nearer.
	bestFrame := uint64(1<<64 - 1)
	if best < n {
		bestFrame = entry(recs(best)).Frame
	}
	for _, rec := range x.late {
		e := entry(int(rec))
		if e.Frame < f || e.Frame >= bestFrame {
			continue
		}
		i := sort.Search(n, func(i int) bool { return recs(i) >= int(rec) })
		if i < n && recs(i) == int(rec) {
			best, bestFrame = i, e.Frame
		}
	}
	return best
}

// Conns returns a copy of the connection table.
func (x *Index) Conns() []ConnInfo {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return append([]ConnInfo(nil), x.conns...)
}

// NumFindings returns how many findings are indexed.
func (x *Index) NumFindings() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return len(x.findings)
}

// Finding returns finding i.
func (x *Index) Finding(i int) FindingRef {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.findings[i]
}

// MemBytes estimates the memory the index holds: entries, arenas and
// tables (not the record cache).
func (x *Index) MemBytes() int64 {
	x.mu.RLock()
	defer x.mu.RUnlock()
	n := int64(len(x.entries)) * entryChunk * int64(unsafe.Sizeof(Entry{}))
	for _, a := range x.arena {
		n += int64(cap(a))
	}
	n += int64(len(x.findings)) * int64(unsafe.Sizeof(FindingRef{}))
	n += int64(len(x.conns)) * int64(unsafe.Sizeof(ConnInfo{})+200)
	n += int64(len(x.codec.eps))*48 + int64(len(x.codec.strs))*48
	return n
}
