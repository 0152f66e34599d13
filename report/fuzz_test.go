package report

import (
	"bytes"
	"encoding/binary"
	"math"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/iwarpkit/iwarpkit/dissect"
	"github.com/iwarpkit/iwarpkit/dissect/mpa"
	"github.com/iwarpkit/iwarpkit/dissect/rdmap"
	"github.com/iwarpkit/iwarpkit/flows"
)

// fuzzRecords turns fuzz input into records: 8 octets per record (type,
// connection, direction, opcode or severity, a 16-bit length and a signed
// 16-bit time step in ms), and for findings the next octets as code and
// message text.
func fuzzRecords(data []byte) []*flows.Record {
	var recs []*flows.Record
	at := time.Duration(0)
	for len(data) >= 8 {
		h := data[:8]
		data = data[8:]
		at += time.Duration(int16(binary.BigEndian.Uint16(h[6:8]))) * time.Millisecond
		r := &flows.Record{Type: flows.RecordType(h[0]%6 + 1), Frame: uint64(len(recs) + 1), TS: t0.Add(at),
			Conn: int(h[1] % 5), Src: epA, Dst: epB, Dir: flows.Dir(h[2] % 4)}
		n := int(binary.BigEndian.Uint16(h[4:6]))
		switch r.Type {
		case flows.RecMPA:
			r.MPA = &flows.MPARecord{Frame: mpa.Frame{Kind: mpa.Kind(h[3]%3 + 1), M: h[3]&8 != 0, C: h[3]&16 != 0, R: h[3]&32 != 0, Rev: h[3] >> 6},
				HasEnhanced: h[3]&4 != 0, Enhanced: mpa.Enhanced{IRD: uint16(n), ORD: uint16(n >> 3)}}
		case flows.RecFPDU:
			r.FPDU = &flows.FPDURecord{Len: n, SegOK: h[3]&0x80 == 0, PayloadLen: n / 2, CRCStatus: flows.CRCStatus(h[3] >> 5 & 3)}
			r.FPDU.Seg.Opcode = rdmap.Opcode(h[3] & 0x1f)
		case flows.RecMessage:
			r.Message = &flows.MessageRecord{Opcode: rdmap.OpReadResponse, RequestFrame: uint64(h[3] & 1), RTR: h[3]&2 != 0, Latency: time.Duration(int16(n)) * time.Microsecond}
		case flows.RecFinding:
			k := min(int(h[3]&0x3f), len(data))
			text := string(data[:k])
			data = data[k:]
			code, msg, _ := strings.Cut(text, "|")
			r.Finding = &dissect.Finding{Severity: dissect.Severity(h[3] >> 6), Code: code, Msg: msg, Ref: msg, Frames: []uint64{uint64(n)}}
		case flows.RecConn:
			r.Summary = &flows.ConnSummary{Initiator: epA, Responder: epB, InitiatorKnown: h[3]&1 != 0, State: "closed",
				HaveReply: h[3]&2 != 0, Rev: h[3] >> 6, Enhanced: h[3]&4 != 0, IRD: uint16(n)}
		default:
			r.Type = 0 // unknown type: must be ignored
		}
		recs = append(recs, r)
	}
	return recs
}

// FuzzCollector feeds arbitrary record streams and checks every output:
// tables write, JUnit and SARIF stay structurally valid, the HTML page
// parses and never gains elements from the capture's text.
func FuzzCollector(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("\x01\x00\x01\x23\x00\x10\x00\x01" + "\x03\x00\x02\x00\x00\x40\x00\x01" + "\x04\x01\x00\x45\x00\x01\x00\x05rdmap.x|<b>bold</b>]]>\x00"))
	f.Add(bytes.Repeat([]byte("\x02\x03\x02\x01\x01\x00\x7f\xff\x04\x00\x00\xc8\x00\x01\x80\x00a.b|c\xff\x01\x02"), 30))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<13 { // about 1000 records are plenty
			return
		}
		c := NewCollector()
		c.maxConns, c.maxFindings = 3, 4
		for _, r := range fuzzRecords(data) {
			c.Add(r)
		}
		var b bytes.Buffer
		for _, w := range []func(*bytes.Buffer) error{
			func(b *bytes.Buffer) error { return c.WriteConn(b) },
			func(b *bytes.Buffer) error { return c.WriteOps(b) },
			func(b *bytes.Buffer) error { return c.WriteFindings(b) },
			func(b *bytes.Buffer) error { return c.WriteLatency(b) },
		} {
			b.Reset()
			if err := w(&b); err != nil {
				t.Fatal(err)
			}
			if strings.ContainsAny(b.String(), "\t\r\x00\x1b") {
				t.Fatalf("control characters in a table:\n%q", b.String())
			}
		}
		b.Reset()
		if err := c.WriteJUnit(&b, "fuzz"); err != nil {
			t.Fatal(err)
		}
		checkJUnit(t, b.Bytes())
		b.Reset()
		if err := c.WriteSARIF(&b, "fuzz", "x.pcap"); err != nil {
			t.Fatal(err)
		}
		checkSARIF(t, b.Bytes(), "x.pcap")
		b.Reset()
		if err := c.WriteHTML(&b, "fuzz"); err != nil {
			t.Fatal(err)
		}
		doc, err := html.Parse(&b)
		if err != nil {
			t.Fatal(err)
		}
		for _, tag := range []string{"script", "b", "img"} {
			if len(elements(doc, tag)) != 0 {
				t.Fatalf("page gained <%s>", tag)
			}
		}
		if len(elements(doc, "table")) < 3 {
			t.Fatalf("page lost its tables")
		}
		if s, ok := c.Worst(); ok != (c.nFindings > 0) || (ok && s != c.worst) {
			t.Fatalf("Worst() = %v %v with %d findings", s, ok, c.nFindings)
		}
		if len(c.tl.b) > MaxBuckets {
			t.Fatalf("%d throughput buckets", len(c.tl.b))
		}
	})
}

// FuzzLatHist checks the quantile bound for arbitrary latencies (8 octets
// each, any int64, negatives and extremes included).
func FuzzLatHist(f *testing.F) {
	f.Add([]byte{})
	f.Add(binary.BigEndian.AppendUint64(nil, math.MaxInt64))
	f.Add(append(binary.BigEndian.AppendUint64(nil, 1), binary.BigEndian.AppendUint64(nil, 1e9)...))
	f.Fuzz(func(t *testing.T, data []byte) {
		var h latHist
		var samples []time.Duration
		for len(data) >= 8 {
			d := time.Duration(binary.BigEndian.Uint64(data))
			data = data[8:]
			h.add(d)
			samples = append(samples, d)
		}
		checkHist(t, &h, samples)
		for _, q := range testQuantiles {
			if v := h.quantile(q); h.n > 0 && (v < h.min || v > h.max) {
				t.Fatalf("quantile %v = %v outside [%v, %v]", q, v, h.min, h.max)
			}
		}
		if m := h.mean(); h.n > 0 && (m < h.min || m > h.max) {
			t.Fatalf("mean %v outside [%v, %v]", m, h.min, h.max)
		}
		if len(h.counts) > 2300 {
			t.Fatalf("%d buckets", len(h.counts))
		}
		var bars uint64
		for _, b := range h.bars(24) {
			bars += b.n
		}
		if bars != h.n {
			t.Fatalf("bars hold %d of %d samples", bars, h.n)
		}
	})
}
