package flows

import (
	"encoding/binary"
	"net/netip"
	"time"

	"github.com/iwarpkit/iwarpkit/dissect/mpa"
	"github.com/iwarpkit/iwarpkit/internal/varpack"
)

// A retired connection (settle.go) keeps its conn record to the end of
// the capture. As a Record, a ConnSummary and an Interop it took 560
// octets of heap and three objects for the collector to scan; a capture
// of 100,000 resets kept 56 MB of them. packConn writes the record into
// Decoder.packs instead, some 40 to 80 octets of varints (55 on
// average for the bundled captures' records, TestPackConn; its strings,
// the state and the interop row, by their index in a table of the
// Decoder's) that unpackConn turns back into the same record at Close.
// It is written by hand (with internal/varpack) because nothing here is
// generic: the encoding lives for one run of one process, and
// encoding/gob or JSON would take more room and time for the same
// fields. A record it cannot pack (an address with a zone, a field it
// does not know set) stays a Record.

// The records queued at Close are held together until they are all
// queued, and 100,000 whole conn records there were the peak of the
// decode. So the packed records stay packed until they are emitted: a
// spill.Sorter keeps them by frame and connection id (in memory up to a
// budget, then in sorted runs in a temporary file), and Close merges
// them with the queue as it empties it, unpacking each as it is emitted
// (releaseLazy). A Parallel's worker hands them to the merge, which does
// the same with the records of all workers (Parallel.merge). Memory no
// longer grows with the connections that retired: 100,000 had taken 5 MB
// of packed records and 5 MB of entries giving their places.
//
// At a frame, the records queued come before a packed conn record: they
// are its connection's own (a TCP segment belongs to one connection, and
// a retired connection's conn record is about its last one), queued at
// Close before it, as its findings (settle.go's unretire), or before
// Close.

// Flags of a packed conn record; the booleans of the summary and its
// Interop each have theirs (summaryFlags, interopFlags).
const (
	packInterop = 1 << iota
	packZeroTS
	packFirstField
)

// Flags of a packed conn record after its booleans': A and B are the
// initiator and the responder, in that order (packABInit) or the other
// (packABResp), and are not written again.
const (
	packABInit = packFirstField << (17 + iota)
	packABResp
)

// maxPackStrs bounds a Decoder's table of the strings of its packed conn
// records (the states and interop rows, a handful); past it a string is
// written out.
const maxPackStrs = 256

// boolField is a boolean of a packed record, by the flag it gets.
type boolField struct {
	bit uint64
	v   *bool
}

// summaryFlags lists s's booleans with their flags.
func summaryFlags(s *ConnSummary) [10]boolField {
	return [...]boolField{
		{packFirstField << 0, &s.InitiatorKnown}, {packFirstField << 1, &s.HaveRequest},
		{packFirstField << 2, &s.HaveReply}, {packFirstField << 3, &s.CRC},
		{packFirstField << 4, &s.MarkersI2R}, {packFirstField << 5, &s.MarkersR2I},
		{packFirstField << 6, &s.Enhanced}, {packFirstField << 7, &s.P2P},
		{packFirstField << 8, &s.Rejected}, {packFirstField << 9, &s.Midstream},
	}
}

// interopFlags lists iv's booleans with their flags.
func interopFlags(iv *Interop) [7]boolField {
	return [...]boolField{
		{packFirstField << 10, &iv.ExpectClose}, {packFirstField << 11, &iv.ExpectMarkersI2R},
		{packFirstField << 12, &iv.ExpectMarkersR2I}, {packFirstField << 13, &iv.ObservedClose},
		{packFirstField << 14, &iv.ObservedMarkersI2R}, {packFirstField << 15, &iv.ObservedMarkersR2I},
		{packFirstField << 16, &iv.Match},
	}
}

// flagsOf returns the flags of the fields that are true.
func flagsOf(fs []boolField) (fl uint64) {
	for _, f := range fs {
		if *f.v {
			fl |= f.bit
		}
	}
	return fl
}

// setFlags sets the fields from fl.
func setFlags(fs []boolField, fl uint64) {
	for _, f := range fs {
		*f.v = fl&f.bit != 0
	}
}

// packable reports whether r is a conn record packConn keeps whole.
func packable(r *Record) bool {
	s := r.Summary
	if r.Type != RecConn || s == nil || r.Src.IsValid() || r.Dst.IsValid() || r.Dir != DirUnknown ||
		r.MPA != nil || r.FPDU != nil || r.Message != nil || r.Finding != nil || r.CM != nil || r.SCTP != nil ||
		r.local != nil || r.flushed {
		return false
	}
	for _, ap := range [...]netip.AddrPort{s.Initiator, s.Responder, s.A, s.B} {
		if ap.Addr().Zone() != "" {
			return false
		}
	}
	return true
}

// packConn appends conn record r, which packable accepts, to b; its
// strings go into the table strs (unpackConn needs the same).
func packConn(b []byte, r *Record, strs *[]string) []byte {
	s := r.Summary
	sf := summaryFlags(s)
	fl := flagsOf(sf[:])
	if r.TS.IsZero() {
		fl |= packZeroTS
	}
	if iv := s.Interop; iv != nil {
		f := interopFlags(iv)
		fl |= packInterop | flagsOf(f[:])
	}
	switch {
	case s.A == s.Initiator && s.B == s.Responder:
		fl |= packABInit
	case s.A == s.Responder && s.B == s.Initiator:
		fl |= packABResp
	}
	b = binary.AppendUvarint(b, fl)
	b = binary.AppendUvarint(b, r.Frame)
	b = binary.AppendVarint(b, int64(r.Conn))
	if !r.TS.IsZero() {
		b = binary.AppendVarint(b, r.TS.Unix())
		b = binary.AppendUvarint(b, uint64(r.TS.Nanosecond()))
	}
	b = varpack.AppendAddrPort(b, s.Initiator)
	b = varpack.AppendAddrPort(b, s.Responder)
	if fl&(packABInit|packABResp) == 0 {
		b = varpack.AppendAddrPort(b, s.A)
		b = varpack.AppendAddrPort(b, s.B)
	}
	b = varpack.AppendString(b, s.State, strs, maxPackStrs)
	b = append(b, s.Rev, byte(s.RTR))
	for _, v := range [...]uint64{uint64(s.IRD), uint64(s.ORD), uint64(s.Octets), s.FirstFrame, s.LastFrame} {
		b = binary.AppendUvarint(b, v)
	}
	for _, v := range [...]int{s.DDPVersion, s.FPDUs, s.Messages, s.CRCErrors, s.Findings,
		s.TCP.Retransmissions, s.TCP.ZeroWindows, s.TCP.Stalls, s.TCP.Cut} {
		b = binary.AppendVarint(b, int64(v))
	}
	b = binary.AppendVarint(b, int64(s.TCP.Stalled))
	if iv := s.Interop; iv != nil {
		b = varpack.AppendString(b, iv.Initiator, strs, maxPackStrs)
		b = varpack.AppendString(b, iv.Responder, strs, maxPackStrs)
		b = varpack.AppendString(b, iv.Row, strs, maxPackStrs)
		b = binary.AppendVarint(b, int64(iv.ExpectV))
		b = binary.AppendVarint(b, int64(iv.ObservedV))
	}
	return b
}

// unpackConn returns the conn record that packConn wrote at the start of
// b with the string table strs; on an error, the record holds what could
// be read.
func unpackConn(b []byte, strs []string) (*Record, error) {
	u := varpack.Reader{B: b}
	fl := u.Uvarint()
	r := mkRecord(RecConn, u.Uvarint(), time.Time{})
	r.Conn = u.Int()
	if fl&packZeroTS == 0 {
		sec := u.Varint()
		r.TS = time.Unix(sec, int64(u.Uvarint())).UTC()
	}
	s := &ConnSummary{}
	sf := summaryFlags(s)
	setFlags(sf[:], fl)
	s.Initiator, s.Responder = u.AddrPort(), u.AddrPort()
	switch {
	case fl&packABInit != 0:
		s.A, s.B = s.Initiator, s.Responder
	case fl&packABResp != 0:
		s.A, s.B = s.Responder, s.Initiator
	default:
		s.A, s.B = u.AddrPort(), u.AddrPort()
	}
	s.State = u.String(strs)
	v := u.Bytes(2)
	s.Rev, s.RTR = v[0], mpa.RTRSet(v[1])
	s.IRD, s.ORD = uint16(u.Uvarint()), uint16(u.Uvarint())
	s.Octets, s.FirstFrame, s.LastFrame = u.Uvarint(), u.Uvarint(), u.Uvarint()
	s.DDPVersion, s.FPDUs, s.Messages = int(u.Varint()), int(u.Varint()), int(u.Varint())
	s.CRCErrors, s.Findings = int(u.Varint()), int(u.Varint())
	s.TCP.Retransmissions, s.TCP.ZeroWindows, s.TCP.Stalls = int(u.Varint()), int(u.Varint()), int(u.Varint())
	s.TCP.Cut = int(u.Varint())
	s.TCP.Stalled = time.Duration(u.Varint())
	if fl&packInterop != 0 {
		s.Interop = &Interop{
			Initiator: u.String(strs),
			Responder: u.String(strs),
			Row:       u.String(strs),
			ExpectV:   int(u.Varint()),
			ObservedV: int(u.Varint()),
		}
		f := interopFlags(s.Interop)
		setFlags(f[:], fl)
	}
	r.Summary = s
	return r, u.Err
}
