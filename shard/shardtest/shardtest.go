// Package shardtest holds what the scale-out tests share: a generated
// capture with many connections, decoding with a shard selector, and a
// canonical form of the decoder's records in which outputs of different
// shards (whose connection ids and, after a split, frame numbers differ)
// can be compared with the unsharded output.
package shardtest

import (
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/iwarpkit/iwarpkit/capture"
	"github.com/iwarpkit/iwarpkit/dissect/mpa"
	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/format"
	"github.com/iwarpkit/iwarpkit/synth"
)

// ManyConns returns a scenario of n interleaved connections that differ in
// everything sharding could trip over: IPv4 and IPv6, several connections
// between the same two hosts (only the ports differ) and the same port on
// many hosts, MPA rev 1 and rev 2 (with Enhanced data), RDMAC streams
// without MPA frames, markers and CRC on and off, corrupted CRCs,
// retransmissions, RDMA Reads (latencies), and FIN, RST and no close.
func ManyConns(n int) synth.Scenario {
	conns := make([]synth.Conn, n)
	for i := range conns {
		var ia, ra netip.Addr
		switch {
		case i%5 == 4:
			ia = netip.AddrFrom16([16]byte{0x20, 0x01, 0x0d, 0xb8, 15: byte(2 + i%3)})
			ra = netip.AddrFrom16([16]byte{0x20, 0x01, 0x0d, 0xb8, 14: 1, 15: byte(1 + i%2)})
		case i%3 == 0:
			// The same two hosts, many connections.
			ia, ra = netip.AddrFrom4([4]byte{198, 51, 100, 2}), netip.AddrFrom4([4]byte{198, 51, 100, 1})
		default:
			ia = netip.AddrFrom4([4]byte{10, 0, byte(i / 7), byte(10 + i)})
			ra = netip.AddrFrom4([4]byte{10, 1, 0, byte(1 + i%4)})
		}
		c := synth.Conn{
			Initiator:  netip.AddrPortFrom(ia, uint16(40000+i)),
			Responder:  netip.AddrPortFrom(ra, 7174),
			Handshake:  true,
			StartDelay: time.Duration(i*137%50) * time.Millisecond,
			Ops: []synth.Op{
				{Dir: synth.I2R, Kind: synth.Send, Size: 64 + i, Pattern: synth.PatternText},
				{Dir: synth.R2I, Kind: synth.Send, Size: 48},
				{Dir: synth.I2R, Kind: synth.Write, Size: 1600 + 37*i, STag: 0x1000 + uint32(i), TO: 0x10000},
				{Dir: synth.I2R, Kind: synth.Read, Size: 1500 + i, STag: 0x2000, TO: 0x20000, SrcSTag: 0x3000 + uint32(i), SrcTO: 0x30000},
				{Dir: synth.R2I, Kind: synth.Read, Size: 700, STag: 0x2100, SrcSTag: 0x3100},
				{Dir: synth.R2I, Kind: synth.SendSE, Size: 100},
				{Dir: synth.I2R, Kind: synth.Send, Size: 0},
				{Dir: synth.R2I, Kind: synth.Write, Size: 300, STag: 0x4000, TO: 8},
			},
		}
		switch i % 4 {
		case 0:
			c.MPA = &synth.MPAParams{Request: synth.MPAFrame{Rev: 1, C: true}, Reply: synth.MPAFrame{Rev: 1, C: true}}
		case 1:
			e := &mpa.Enhanced{IRD: uint16(1 + i%8), ORD: uint16(1 + i%8)}
			c.MPA = &synth.MPAParams{Request: synth.MPAFrame{Rev: 2, M: true, C: true, Enhanced: e}, Reply: synth.MPAFrame{Rev: 2, M: i%8 == 1, Enhanced: e}}
		case 2:
			c.MPA = &synth.MPAParams{Request: synth.MPAFrame{Rev: 1}, Reply: synth.MPAFrame{Rev: 1}}
			c.Segmentation = synth.SegmentPerRecord
		case 3:
			if i%8 == 3 {
				c.MPA = nil // RDMAC: markers and CRC both ways, no MPA frames
			} else {
				c.MPA = &synth.MPAParams{Request: synth.MPAFrame{Rev: 2, M: true, C: true}, Reply: synth.MPAFrame{Rev: 2, M: true, C: true}}
			}
		}
		if i%6 == 1 {
			c.Impair.CorruptCRC = []synth.FPDURef{{Dir: synth.I2R, Index: 1}}
		}
		if i%9 == 5 {
			c.Impair.Duplicate = []synth.SegRef{{Dir: synth.I2R, Index: 1}}
		}
		switch i % 5 {
		case 1:
			c.Close = synth.Close{Kind: synth.CloseRST, By: synth.R2I}
		case 3:
			c.Close = synth.Close{Kind: synth.CloseNone}
		}
		conns[i] = c
	}
	return synth.Scenario{Name: fmt.Sprintf("many-conns-%d", n), Seed: int64(n), Conns: conns}
}

// Write generates s into dir/name and returns the path.
func Write(t testing.TB, dir, name string, s synth.Scenario) string {
	t.Helper()
	path := filepath.Join(dir, name)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := synth.Generate(s, f, nil); err != nil {
		t.Fatalf("generate %s: %v", name, err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// PacketSource is what Decode reads: a capture.Source or capture.Merge.
type PacketSource interface {
	Next() (capture.Packet, error)
}

// Decode runs the decoder over src, feeding only the packets keep accepts
// (all when keep is nil), and returns the records in output order.
func Decode(t testing.TB, src PacketSource, keep func(*capture.Packet) bool) []*flows.Record {
	t.Helper()
	var out []*flows.Record
	dec := flows.NewDecoder(flows.Options{}, func(r *flows.Record) { out = append(out, r) })
	for {
		p, err := src.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		if keep == nil || keep(&p) {
			dec.Packet(&p)
		}
	}
	dec.Close()
	return out
}

// DecodeFiles merges paths (capture.OpenMerge) and decodes them.
func DecodeFiles(t testing.TB, keep func(*capture.Packet) bool, paths ...string) []*flows.Record {
	t.Helper()
	m, err := capture.OpenMerge(paths...)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	return Decode(t, m, keep)
}

// frameKeys are the JSON Lines keys (at any depth) whose values are frame
// numbers (JSONL.md).
var frameKeys = map[string]bool{
	"frame": true, "frames": true, "first_frame": true, "last_frame": true,
	"request_frame": true, "segment_frame": true,
}

// Canonical returns the records as JSON Lines in a form that does not
// depend on which shard decoded them: each record's "conn" id is replaced
// by the connection's identity (its endpoints in order of first appearance
// and its first frame, from its conn record) and every frame number is
// passed through frame (nil keeps them). Records whose connection has no
// conn record keep "conn" as "?id". The lines are returned sorted.
func Canonical(recs []*flows.Record, frame func(uint64) uint64) []string {
	if frame == nil {
		frame = func(f uint64) uint64 { return f }
	}
	ident := map[int]string{}
	for _, r := range recs {
		if r.Type == flows.RecConn && r.Summary != nil {
			s := r.Summary
			ident[r.Conn] = fmt.Sprintf("%s|%s|%d", s.A, s.B, frame(s.FirstFrame))
		}
	}
	out := make([]string, 0, len(recs))
	for _, r := range recs {
		kvs := mapFrames(format.Fields(r), frame)
		id, ok := ident[r.Conn]
		if !ok {
			id = fmt.Sprintf("?%d", r.Conn)
		}
		for i := range kvs {
			if kvs[i].Key == "conn" {
				kvs[i].Val = format.Str(id)
			}
		}
		out = append(out, string(format.AppendJSON(nil, kvs)))
	}
	slices.Sort(out)
	return out
}

func mapFrames(kvs []format.KV, frame func(uint64) uint64) []format.KV {
	for i := range kvs {
		v := &kvs[i].Val
		switch {
		case frameKeys[kvs[i].Key] && v.Kind == format.KUint:
			v.U = frame(v.U)
		case frameKeys[kvs[i].Key] && v.Kind == format.KList:
			for j := range v.List {
				if v.List[j].Kind == format.KUint {
					v.List[j].U = frame(v.List[j].U)
				}
			}
		case v.Kind == format.KObject:
			v.Obj = mapFrames(v.Obj, frame)
		case v.Kind == format.KList:
			for j := range v.List {
				if v.List[j].Kind == format.KObject {
					v.List[j].Obj = mapFrames(v.List[j].Obj, frame)
				}
			}
		}
	}
	return kvs
}

// Counts totals records by type and the conn summaries' counters, for
// messages that say what differs.
type Counts struct {
	Records                                  map[string]int
	Conns, FPDUs, Messages, CRCErrors, Finds int
	Octets                                   uint64
}

// Count totals recs.
func Count(recs []*flows.Record) Counts {
	c := Counts{Records: map[string]int{}}
	for _, r := range recs {
		c.Records[r.Type.String()]++
		if r.Type == flows.RecConn && r.Summary != nil {
			s := r.Summary
			c.Conns++
			c.FPDUs += s.FPDUs
			c.Messages += s.Messages
			c.CRCErrors += s.CRCErrors
			c.Finds += s.Findings
			c.Octets += s.Octets
		}
	}
	return c
}

// Add adds o to c.
func (c *Counts) Add(o Counts) {
	if c.Records == nil {
		c.Records = map[string]int{}
	}
	for k, v := range o.Records {
		c.Records[k] += v
	}
	c.Conns += o.Conns
	c.FPDUs += o.FPDUs
	c.Messages += o.Messages
	c.CRCErrors += o.CRCErrors
	c.Finds += o.Finds
	c.Octets += o.Octets
}

// String prints the counts.
func (c Counts) String() string {
	return fmt.Sprintf("records %v conns %d fpdus %d messages %d crc_errors %d findings %d octets %d",
		c.Records, c.Conns, c.FPDUs, c.Messages, c.CRCErrors, c.Finds, c.Octets)
}

// Equal compares two sorted line lists and reports the first difference.
func Equal(t testing.TB, what string, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d records, want %d", what, len(got), len(want))
	}
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			t.Errorf("%s: first difference at sorted line %d:\n got  %s\n want %s", what, i, got[i], want[i])
			return
		}
	}
}
