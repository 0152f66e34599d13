package replay

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/netip"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/iwarpkit/iwarpkit/capture"
	"github.com/iwarpkit/iwarpkit/dissect/mpa"
	"github.com/iwarpkit/iwarpkit/dissect/rdmap"
	"github.com/iwarpkit/iwarpkit/filter"
	"github.com/iwarpkit/iwarpkit/flows"
)

// Dir is a direction of a connection: initiator to responder (the side that
// sent the SYN and the MPA Request) or back.
type Dir uint8

// Directions.
const (
	I2R Dir = 0 // initiator -> responder
	R2I Dir = 1 // responder -> initiator
)

// String returns "i2r" or "r2i", as iwarpdump's JSON Lines name directions.
func (d Dir) String() string {
	if d == R2I {
		return "r2i"
	}
	return "i2r"
}

// Other returns the opposite direction.
func (d Dir) Other() Dir { return 1 - d }

// Digest is the SHA-256 of a message's ULP payload: the payload octets of its
// DDP segments in order (RFC 5041 §5), so that it does not depend on how the
// message was cut into segments.
type Digest [sha256.Size]byte

// String returns the first eight octets in hex, enough to tell payloads apart
// in a report.
func (d Digest) String() string { return hex.EncodeToString(d[:8]) }

// Script is what one recorded connection did, as the replay engine plays it
// back: the MPA Request and Reply (RFC 5044 §7.1, RFC 6581 §8) and the RDMA
// messages of both directions in causal order.
type Script struct {
	// Conn is the connection id in the capture (flows.Record.Conn).
	Conn int
	// Initiator and Responder are the recorded endpoints (A and B in order of
	// appearance when the capture does not say who initiated).
	Initiator, Responder netip.AddrPort
	// Request and Reply are the recorded frames, their private data owned
	// by the Script; nil when not captured.
	Request, Reply *mpa.Frame
	// NoMPA is set for an RDMAC stream without Request/Reply frames (markers
	// and CRC in both directions, DDP/RDMAP version 0: PROTOCOL.md E), and for
	// a connection whose handshake was not captured; the negotiated values are
	// then taken from the decoder's connection summary.
	NoMPA bool
	// Summary is the decoder's summary of the recorded connection.
	Summary flows.ConnSummary
	// MarkersI2R and MarkersR2I say whether the recorded FPDUs of each
	// direction carry MPA markers (RFC 5044 §5.1): what the decoder found
	// negotiated or, in a capture that starts mid-stream, the marker grid it
	// recovered from the FPDUs. A replay without MPA frames, or one that
	// makes up the frames the capture lacks, uses them.
	MarkersI2R, MarkersR2I bool
	// Warnings say what of the recording the replay cannot carry (a
	// mid-stream capture's MPA exchange, say), one sentence each.
	Warnings []string
	// Messages are the RDMA messages of both directions ordered by the frame
	// of their first segment, which is the causal order the replay keeps: a
	// message waits until every earlier message of the other direction has
	// been received (see Message.After).
	Messages []Message
	// Start is the timestamp of the connection's first record (its MPA
	// Request, or its first FPDU): paced messages keep their offsets from
	// it. First is that of its SYN when the capture has it (else Start),
	// End that of its last frame (the FIN or the last ACK when the capture
	// has them): a concurrent replay starts each connection at its First
	// and keeps apart connections whose spans did not meet
	// (Options.Serial).
	Start, First, End time.Time
	// Skipped counts FPDUs that could not be replayed: their DDP segment did
	// not decode, or some of their octets were not captured.
	Skipped int
	// Fillers counts messages whose payload was not kept (LoadOptions.MaxPayload):
	// they are replayed with generated octets of the same length.
	Fillers int
}

// markers reports whether the recorded FPDUs of direction d carry markers.
func (s *Script) markers(d Dir) bool {
	if d == I2R {
		return s.MarkersI2R
	}
	return s.MarkersR2I
}

// Message is one recorded RDMA message (RFC 5040 §4, its DDP segments gathered
// per RFC 5041 §5).
type Message struct {
	Dir Dir
	// Head is the first segment's DDP and RDMAP headers (Payload nil): the
	// opcode, the queue and MSN or STag and TO, and the Read Request,
	// Terminate, Immediate Data or Atomic header.
	Head rdmap.Segment
	// Segments are the DDP segments in order.
	Segments []Segment
	// Frame and TS are those of the first segment; LastFrame of the last.
	Frame, LastFrame uint64
	TS               time.Time
	// Length is the payload length, Digest its SHA-256.
	Length uint64
	Digest Digest
	// Filler is set when the payload octets were not kept.
	Filler bool
	// Complete is set when the last segment (L=1) was seen.
	Complete bool
	// RTR marks the ready-to-receive message of peer-to-peer mode (RFC 6581
	// §4) and the zero-length Read Response that answers a Read RTR. The
	// replay regenerates them for the negotiation it makes.
	RTR bool
}

// Opcode returns the message's RDMAP opcode.
func (m *Message) Opcode() rdmap.Opcode { return m.Head.Opcode }

// Segment is one DDP segment of a message: where its payload goes (the MO of
// an untagged message, or the TO less the first segment's TO for a tagged
// one), whether it is the last, and its payload when kept.
type Segment struct {
	Off        uint64
	Last       bool
	PayloadLen int
	Payload    []byte
}

// LoadOptions select the connections to extract and bound the memory used.
type LoadOptions struct {
	// Conns lists the connection ids to keep; empty keeps them all.
	Conns []int
	// Filter keeps the connections with at least one record it matches
	// (a display filter, package filter). With Load, a filter makes a first
	// pass over the file to select, so that only selected connections are
	// held in memory.
	Filter *filter.Filter
	// MaxPayload caps the payload octets kept over all connections; the
	// payload of messages past it is replaced on replay by generated
	// octets of the same length (their recorded digest is still known, so
	// --connect compares real peers' payloads against it). 0 means 64 MiB;
	// a negative value keeps none.
	MaxPayload int64
	// MaxSegments caps the DDP segments kept over all connections (each costs
	// about 50 octets plus its payload); past it Load fails. 0 means 4 Mi.
	MaxSegments int
	// Decoder configures the decoder (--decode-as, MPA flag meaning).
	// Its Payload hook is replaced.
	Decoder flows.Options
}

// Errors of Load.
var (
	ErrTooManySegments = errors.New("replay: capture holds more DDP segments than LoadOptions.MaxSegments; select fewer connections")
	ErrNoConnections   = errors.New("replay: no iWARP connection selected")
)

// NoConnectionError is the error of Load and Extract when a connection id
// asked for (LoadOptions.Conns) is not an iWARP connection of the capture.
// errors.Is(err, ErrNoConnections) holds.
type NoConnectionError struct {
	Wanted []int // the ids asked for that the capture does not have (none: no selection was given, and the capture has no iWARP connection)
	Have   []int // the capture's iWARP connection ids, ascending
}

func (e *NoConnectionError) Error() string {
	if len(e.Wanted) == 0 {
		return "replay: the capture has no iWARP connection"
	}
	var b strings.Builder
	b.WriteString("replay: no iWARP connection")
	if len(e.Wanted) > 1 {
		b.WriteString("s")
	}
	b.WriteString(" " + idRanges(e.Wanted) + " (the capture has ")
	switch len(e.Have) {
	case 0:
		b.WriteString("no iWARP connection)")
	case 1:
		b.WriteString("iWARP connection " + idRanges(e.Have) + ")")
	default:
		b.WriteString("iWARP connections " + idRanges(e.Have) + ")")
	}
	return b.String()
}

// Is makes a NoConnectionError an ErrNoConnections.
func (e *NoConnectionError) Is(target error) bool { return target == ErrNoConnections }

// idRanges writes ids as "0, 2, 4-6".
func idRanges(ids []int) string {
	ids = slices.Compact(slices.Sorted(slices.Values(ids)))
	var parts []string
	for i := 0; i < len(ids); {
		j := i
		for j+1 < len(ids) && ids[j+1] == ids[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d-%d", ids[i], ids[j]))
		} else {
			parts = append(parts, fmt.Sprint(ids[i]))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

const (
	defaultMaxPayload  = 64 << 20
	defaultMaxSegments = 4 << 20
	maxOpenMessages    = 4096
)

// Load reads the capture file at path ("-": standard input) and returns the
// script of each selected connection, in connection order. A Filter needs
// two passes: a path that cannot be read twice (standard input, a pipe) is
// first copied to a temporary file (os.CreateTemp's directory, removed
// before Load returns), so that memory does not grow with the capture.
func Load(path string, o LoadOptions) ([]*Script, error) {
	if o.Filter != nil {
		if !rereadable(path) {
			tmp, err := spool(path)
			if err != nil {
				return nil, err
			}
			defer os.Remove(tmp)
			path = tmp
		}
		sel, err := selectConns(path, o)
		if err != nil {
			return nil, err
		}
		o.Conns = intersect(o.Conns, sel)
		o.Filter = nil
		if len(o.Conns) == 0 {
			return nil, ErrNoConnections
		}
	}
	src, err := capture.Open(path)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	return Extract(src, o)
}

// rereadable reports whether path names a regular file, which Load can
// read twice.
func rereadable(path string) bool {
	if path == "-" {
		return false
	}
	fi, err := os.Stat(path)
	return err != nil || fi.Mode().IsRegular() // a missing file fails in Open
}

// spool copies the capture at path ("-": standard input) to a temporary file
// and returns its name.
func spool(path string) (string, error) {
	in := os.Stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return "", err
		}
		defer f.Close()
		in = f
	}
	tmp, err := os.CreateTemp("", "iwarpreplay-*.cap")
	if err != nil {
		return "", fmt.Errorf("replay: copying %s to a temporary file for the display filter's two passes: %w", path, err)
	}
	_, err = io.Copy(tmp, in)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("replay: copying %s to a temporary file for the display filter's two passes: %w", path, err)
	}
	return tmp.Name(), nil
}

// selectConns runs the display filter over the file and returns the ids of
// the connections with a matching record.
func selectConns(path string, o LoadOptions) ([]int, error) {
	src, err := capture.Open(path)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	seen := map[int]bool{}
	dopts := o.Decoder
	dopts.Payload = nil
	dec := flows.NewDecoder(dopts, func(r *flows.Record) {
		if !seen[r.Conn] && o.Filter.MatchRecord(r) {
			seen[r.Conn] = true
		}
	})
	if err := feed(src, dec, nil); err != nil {
		return nil, err
	}
	ids := make([]int, 0, len(seen))
	for id := range seen {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids, nil
}

func intersect(a, b []int) []int {
	if len(a) == 0 {
		return b
	}
	var out []int
	for _, x := range b {
		if slices.Contains(a, x) {
			out = append(out, x)
		}
	}
	return out
}

// feed decodes every packet of src, showing each to hook first (when not
// nil).
func feed(src *capture.Source, dec *flows.Decoder, hook func(*capture.Packet)) error {
	for {
		p, err := src.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if hook != nil {
			hook(&p)
		}
		dec.Packet(&p)
	}
	dec.Close()
	return nil
}

// Extract reads every packet of src and returns the script of each selected
// connection, in connection order. A Filter is applied in the same pass: all
// connections are gathered and the unselected ones dropped at the end.
func Extract(src *capture.Source, o LoadOptions) ([]*Script, error) {
	x := newExtractor(o)
	dopts := o.Decoder
	dopts.Payload = x.payload
	dec := flows.NewDecoder(dopts, x.record)
	if err := feed(src, dec, x.packet); err != nil {
		return nil, err
	}
	if x.err != nil {
		return nil, x.err
	}
	return x.finish()
}

type msgKey struct {
	tagged bool
	op     rdmap.Opcode
	a, b   uint64 // QN, MSN or STag
}

type openMsg struct {
	dir Dir
	idx int
	h   hash.Hash
}

type extConn struct {
	s *Script
	// first is the source of the first record received: records of unknown
	// direction from it are filed as I2R until finish. The decoder may send
	// a mid-stream connection's directions in any order, so earliest is the
	// source of the record with the lowest frame: the side seen first,
	// which stands for the initiator when the capture does not say.
	first         netip.AddrPort
	haveSrc       bool
	earliest      netip.AddrPort
	earliestFrame uint64
	selected      bool
	msgs          [2][]Message // per direction, stream order
	markers       [2]bool      // an FPDU of the direction carried a marker
	open          map[msgKey]*openMsg
	done          bool
}

type extractor struct {
	o        LoadOptions
	conns    map[int]*extConn
	iwarp    map[int]bool // every connection with an MPA frame or FPDU
	kept     int64
	segments int
	err      error
	// syns are the times of the SYNs (without ACK) seen, by source and
	// destination, until a connection's first record takes its own.
	syns map[[2]netip.AddrPort]time.Time
}

// maxSyns bounds extractor.syns: past it, SYNs older than synAge (of the
// capture's time) are forgotten, and all of them if that is not enough.
const (
	maxSyns = 1 << 16
	synAge  = time.Minute
)

// packet notes the time of each SYN that opens a connection, for
// Script.First.
func (x *extractor) packet(p *capture.Packet) {
	if p.Kind != capture.KindTCP || p.Flags&(capture.FlagSYN|capture.FlagACK) != capture.FlagSYN {
		return
	}
	if len(x.syns) >= maxSyns {
		for k, ts := range x.syns {
			if p.TS.Sub(ts) > synAge {
				delete(x.syns, k)
			}
		}
		if len(x.syns) >= maxSyns {
			clear(x.syns)
		}
	}
	x.syns[[2]netip.AddrPort{p.Src, p.Dst}] = p.TS
}

func newExtractor(o LoadOptions) *extractor {
	if o.MaxPayload == 0 {
		o.MaxPayload = defaultMaxPayload
	}
	if o.MaxSegments == 0 {
		o.MaxSegments = defaultMaxSegments
	}
	return &extractor{o: o, conns: map[int]*extConn{}, iwarp: map[int]bool{}, syns: map[[2]netip.AddrPort]time.Time{}}
}

func (x *extractor) wanted(id int) bool {
	return len(x.o.Conns) == 0 || slices.Contains(x.o.Conns, id)
}

func (x *extractor) conn(r *flows.Record) *extConn {
	c := x.conns[r.Conn]
	if c == nil {
		c = &extConn{s: &Script{Conn: r.Conn, Start: r.TS, First: r.TS, End: r.TS}, open: map[msgKey]*openMsg{}}
		x.conns[r.Conn] = c
		// Its SYN, from either end (the record's source may be the
		// responder).
		for _, k := range [][2]netip.AddrPort{{r.Src, r.Dst}, {r.Dst, r.Src}} {
			if ts, ok := x.syns[k]; ok && r.Src.IsValid() {
				delete(x.syns, k)
				if !ts.After(r.TS) {
					c.s.First = ts
				}
				break
			}
		}
	}
	if r.TS.After(c.s.End) {
		c.s.End = r.TS
	}
	if r.Src.IsValid() {
		if !c.haveSrc {
			c.first, c.haveSrc = r.Src, true
		}
		if !c.earliest.IsValid() || r.Frame < c.earliestFrame {
			c.earliest, c.earliestFrame = r.Src, r.Frame
		}
	}
	return c
}

func (c *extConn) dir(r *flows.Record) Dir {
	switch r.Dir {
	case flows.DirI2R:
		return I2R
	case flows.DirR2I:
		return R2I
	}
	if r.Src == c.first {
		return I2R
	}
	return R2I
}

// record receives the decoder's records in frame order.
func (x *extractor) record(r *flows.Record) {
	if r.Type == flows.RecMPA || r.Type == flows.RecFPDU {
		x.iwarp[r.Conn] = true
	}
	if !x.wanted(r.Conn) {
		return
	}
	c := x.conn(r)
	if x.o.Filter != nil && !c.selected && x.o.Filter.MatchRecord(r) {
		c.selected = true
	}
	switch r.Type {
	case flows.RecMPA:
		f := r.MPA.Frame
		f.PD = slices.Clone(f.PD)
		if f.Kind == mpa.KindReply {
			if c.s.Reply == nil {
				c.s.Reply = &f
			}
		} else if c.s.Request == nil {
			c.s.Request = &f
		}
	case flows.RecFPDU:
		if !r.FPDU.SegOK || r.FPDU.CRCStatus == flows.CRCIncomplete {
			c.s.Skipped++
		}
		if len(r.FPDU.Markers) > 0 {
			c.markers[c.dir(r)] = true
		}
	case flows.RecConn:
		c.s.Summary = *r.Summary
		c.done = true
	}
}

// payload receives each decoded FPDU's payload (flows.Options.Payload).
func (x *extractor) payload(r *flows.Record, payload []byte) {
	if x.err != nil || !x.wanted(r.Conn) || r.FPDU == nil {
		return
	}
	c := x.conn(r)
	d := c.dir(r)
	seg := r.FPDU.Seg
	seg.Payload = nil
	key := msgKey{tagged: seg.DDP.T, op: seg.Opcode}
	if seg.DDP.T {
		key.a = uint64(seg.DDP.STag)
	} else {
		key.a, key.b = uint64(seg.DDP.QN), uint64(seg.DDP.MSN)
	}
	om := c.open[key]
	if om != nil && om.dir != d {
		om = nil
	}
	if om == nil {
		if len(c.open) >= maxOpenMessages {
			// A message that never ends: close the oldest.
			var oldest *openMsg
			var ok msgKey
			for k, m := range c.open {
				if oldest == nil || c.msgs[m.dir][m.idx].Frame < c.msgs[oldest.dir][oldest.idx].Frame {
					oldest, ok = m, k
				}
			}
			c.closeMsg(ok, oldest)
		}
		om = &openMsg{dir: d, idx: len(c.msgs[d]), h: sha256.New()}
		c.msgs[d] = append(c.msgs[d], Message{Dir: d, Head: seg, Frame: r.Frame, TS: r.TS})
		c.open[key] = om
	}
	m := &c.msgs[d][om.idx]
	if x.segments >= x.o.MaxSegments {
		x.err = ErrTooManySegments
		return
	}
	x.segments++
	off := uint64(seg.DDP.MO)
	if seg.DDP.T {
		off = seg.DDP.TO - m.Head.DDP.TO
	}
	sg := Segment{Off: off, Last: seg.DDP.L, PayloadLen: len(payload)}
	if !m.Filler && x.o.MaxPayload > 0 && x.kept+int64(len(payload)) <= x.o.MaxPayload {
		sg.Payload = slices.Clone(payload)
		x.kept += int64(len(payload))
	} else if !m.Filler {
		m.Filler = true
		for i := range m.Segments {
			x.kept -= int64(len(m.Segments[i].Payload))
			m.Segments[i].Payload = nil
		}
	}
	om.h.Write(payload)
	m.Segments = append(m.Segments, sg)
	m.Length += uint64(len(payload))
	m.LastFrame = r.Frame
	if seg.DDP.L {
		m.Complete = true
		c.closeMsg(key, om)
	}
}

func (c *extConn) closeMsg(k msgKey, om *openMsg) {
	m := &c.msgs[om.dir][om.idx]
	om.h.Sum(m.Digest[:0])
	delete(c.open, k)
}

// finish orders each connection's messages and returns the selected scripts.
func (x *extractor) finish() ([]*Script, error) {
	ids := make([]int, 0, len(x.conns))
	for id, c := range x.conns {
		if x.o.Filter != nil && !c.selected {
			continue
		}
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var out []*Script
	for _, id := range ids {
		c := x.conns[id]
		for k, om := range c.open {
			c.closeMsg(k, om)
		}
		s := c.s
		if s.Request == nil && s.Reply == nil && len(c.msgs[0])+len(c.msgs[1]) == 0 {
			continue // not iWARP
		}
		sum := &s.Summary
		if !sum.InitiatorKnown && c.haveSrc && c.earliest.IsValid() && c.earliest != c.first {
			// The side seen first stands for the initiator: file the
			// other side's messages as R2I.
			c.msgs[I2R], c.msgs[R2I] = c.msgs[R2I], c.msgs[I2R]
			c.markers[I2R], c.markers[R2I] = c.markers[R2I], c.markers[I2R]
			for d := range c.msgs {
				for i := range c.msgs[d] {
					c.msgs[d][i].Dir = Dir(d)
				}
			}
			c.first = c.earliest
		}
		s.MarkersI2R = sum.MarkersI2R || c.markers[I2R]
		s.MarkersR2I = sum.MarkersR2I || c.markers[R2I]
		switch {
		case sum.InitiatorKnown:
			s.Initiator, s.Responder = sum.Initiator, sum.Responder
		case c.haveSrc && sum.B == c.first:
			// Mid-stream: the side seen first stands for the initiator,
			// as the messages' directions do (I2R is from c.first).
			s.Initiator, s.Responder = sum.B, sum.A
		default:
			s.Initiator, s.Responder = sum.A, sum.B
		}
		s.NoMPA = s.Request == nil
		if s.Request == nil && s.Reply == nil && !sum.InitiatorKnown {
			s.Warnings = append(s.Warnings, fmt.Sprintf("the capture starts mid-stream: the MPA Request and Reply were not captured, so the replay sends none "+
				"(or makes them up when the negotiation or an RNIC kind is overridden), with the markers (i2r %s, r2i %s) and CRC (%s) of the recorded FPDUs, "+
				"the marker grid starting at the new stream's first octet; the side seen first, %s, stands for the initiator",
				onOff(s.MarkersI2R), onOff(s.MarkersR2I), onOff(sum.CRC), s.Initiator))
		}
		// Merge the two directions by the frame of their first segment,
		// keeping each direction's stream order.
		a, b := c.msgs[I2R], c.msgs[R2I]
		s.Messages = make([]Message, 0, len(a)+len(b))
		for len(a) > 0 || len(b) > 0 {
			if len(b) == 0 || (len(a) > 0 && a[0].Frame <= b[0].Frame) {
				s.Messages = append(s.Messages, a[0])
				a = a[1:]
			} else {
				s.Messages = append(s.Messages, b[0])
				b = b[1:]
			}
		}
		for i := range s.Messages {
			if s.Messages[i].Filler {
				s.Fillers++
			}
		}
		markRTR(s)
		out = append(out, s)
	}
	if len(x.o.Conns) > 0 && x.o.Filter == nil {
		// Every id asked for must be an iWARP connection of the capture:
		// --conn 1,5 on a capture of two connections is a mistake to
		// report, not a replay of connection 1 alone.
		var missing []int
		for _, id := range x.o.Conns {
			if !x.iwarp[id] {
				missing = append(missing, id)
			}
		}
		if len(missing) > 0 {
			have := make([]int, 0, len(x.iwarp))
			for id := range x.iwarp {
				have = append(have, id)
			}
			slices.Sort(have)
			return nil, &NoConnectionError{Wanted: missing, Have: have}
		}
	}
	if len(out) == 0 {
		if len(x.o.Conns) == 0 && x.o.Filter == nil && len(x.iwarp) == 0 {
			// Nothing was selected away: there is nothing to select.
			return nil, &NoConnectionError{}
		}
		return nil, ErrNoConnections
	}
	return out, nil
}

// markRTR flags the RTR of a recorded peer-to-peer connection (RFC 6581 §4):
// the initiator's first message when it is a zero-length Send, RDMA Write or
// RDMA Read Request, and for a Read the zero-length Read Response to it.
func markRTR(s *Script) {
	if s.Request == nil || s.Reply == nil || !s.Summary.P2P {
		return
	}
	for i := range s.Messages {
		m := &s.Messages[i]
		if m.Dir != I2R {
			continue
		}
		switch m.Head.Opcode {
		case rdmap.OpSend, rdmap.OpSendSE, rdmap.OpWrite:
			m.RTR = m.Length == 0
		case rdmap.OpReadRequest:
			m.RTR = m.Head.Read.Size == 0
			if m.RTR {
				for j := i + 1; j < len(s.Messages); j++ {
					r := &s.Messages[j]
					if r.Dir == R2I && r.Head.Opcode == rdmap.OpReadResponse && r.Length == 0 {
						r.RTR = true
						break
					}
				}
			}
		}
		return
	}
}

// String summarises the script in one line.
func (s *Script) String() string {
	n := [2]int{}
	for i := range s.Messages {
		n[s.Messages[i].Dir]++
	}
	mode := "no MPA exchange"
	if s.Request != nil {
		mode = fmt.Sprintf("MPA rev %d", s.Request.Rev)
	}
	return fmt.Sprintf("conn %d %s > %s: %s, %d messages i2r, %d r2i", s.Conn, s.Initiator, s.Responder, mode, n[0], n[1])
}

// WriteText lists the script for people: the MPA frames and one line per
// message with its dependency on the other direction.
func (s *Script) WriteText(w io.Writer) error {
	var b strings.Builder
	b.WriteString(s.String())
	b.WriteByte('\n')
	for _, f := range []*mpa.Frame{s.Request, s.Reply} {
		if f == nil {
			continue
		}
		fmt.Fprintf(&b, "  MPA %s rev %d M=%d C=%d R=%d S=%d pd_len %d\n", f.Kind, f.Rev, b2i(f.M), b2i(f.C), b2i(f.R), b2i(f.S), len(f.PD))
	}
	var seen [2]int
	for i := range s.Messages {
		m := &s.Messages[i]
		fmt.Fprintf(&b, "  %4d %s frame %d: %s, %d octets in %d segments [%s]", i, m.Dir, m.Frame, m.Head.Opcode, m.Length, len(m.Segments), m.Digest)
		if n := seen[m.Dir.Other()]; n > 0 {
			fmt.Fprintf(&b, " after %d %s", n, m.Dir.Other())
		}
		if m.Filler {
			b.WriteString(" (payload not kept)")
		}
		if m.RTR {
			b.WriteString(" (RTR)")
		}
		if !m.Complete {
			b.WriteString(" (incomplete)")
		}
		b.WriteByte('\n')
		seen[m.Dir]++
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func b2i(v bool) int {
	if v {
		return 1
	}
	return 0
}
