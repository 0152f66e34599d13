package flows_test

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/iwarpkit/iwarpkit/capture"
	"github.com/iwarpkit/iwarpkit/dissect/ibcm"
	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/internal/testutil"
	"github.com/iwarpkit/iwarpkit/synth"
)

// TestRxeCaptures decodes the real Linux rxe captures (MANIFEST.md: REQ,
// REP, RTU, RC traffic, DREQ, DREP over IPv4; REQ and REJ reason 28 over
// IPv6) into CM records tied together in one connection each.
func TestRxeCaptures(t *testing.T) {
	cases := []struct {
		path  string
		msgs  string
		dirs  string
		state string
		data  uint64
	}{
		{"../testdata/rxe/rxe_v4_rping.pcap", "req rep rtu dreq drep", "i2r r2i i2r i2r r2i", "closed", 36},
		{"../testdata/rxe/rxe_v6_rej_app.pcap", "req rej", "i2r r2i", "rejected", 0},
	}
	for _, c := range cases {
		recs := testutil.Decode(t, c.path, flows.Options{})
		var msgs, dirs []string
		var sum *flows.CMSummary
		for _, r := range recs {
			switch r.Type {
			case flows.RecCM:
				msgs = append(msgs, r.CM.Msg.Type.String())
				dirs = append(dirs, r.Dir.String())
				if r.CM.ICRCStatus != flows.CRCOK {
					t.Errorf("%s frame %d: ICRC %v", c.path, r.Frame, r.CM.ICRCStatus)
				}
				if r.Conn != 0 {
					t.Errorf("%s frame %d: conn %d", c.path, r.Frame, r.Conn)
				}
			case flows.RecExtConn:
				sum = r.CM.Summary
			default:
				t.Errorf("%s: unexpected %v record", c.path, r.Type)
			}
		}
		if strings.Join(msgs, " ") != c.msgs || strings.Join(dirs, " ") != c.dirs {
			t.Errorf("%s: %v %v", c.path, msgs, dirs)
		}
		if sum == nil {
			t.Fatalf("%s: no conn record", c.path)
		}
		if sum.State != c.state || sum.DataPackets != c.data || !sum.HasService || sum.PDKind != ibcm.PDIPCM || sum.Messages != len(msgs) {
			t.Errorf("%s: summary %+v", c.path, sum)
		}
		if c.state == "rejected" && (!sum.Rejected || sum.Reason != ibcm.RejConsumerDefined) {
			t.Errorf("%s: reject %+v", c.path, sum)
		}
	}
}

// TestExtConnIDs: CM exchanges, SCTP associations and TCP connections share
// the connection numbering, in order of first appearance.
func TestExtConnIDs(t *testing.T) {
	s, _ := synth.NamedExt("roce-cm-hello", 1)
	var buf bytes.Buffer
	if _, err := s.Generate(&buf, nil); err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	last := -1
	for _, r := range decodeReader(t, &buf, flows.Options{}) {
		if r.Type == flows.RecCM && !seen[r.Conn] {
			if r.Conn != last+1 {
				t.Errorf("frame %d: conn %d after %d", r.Frame, r.Conn, last)
			}
			seen[r.Conn], last = true, r.Conn
		}
	}
	if len(seen) != 3 {
		t.Errorf("%d exchanges", len(seen))
	}
}

// TestExtMaxConns: the exchange table is bounded; the oldest exchange is
// summarised early.
func TestExtMaxConns(t *testing.T) {
	s, _ := synth.NamedExt("roce-cm-hello", 1)
	var buf bytes.Buffer
	if _, err := s.Generate(&buf, nil); err != nil {
		t.Fatal(err)
	}
	conns := 0
	for _, r := range decodeReader(t, &buf, flows.Options{MaxConns: 1}) {
		if r.Type == flows.RecExtConn {
			conns++
		}
	}
	if conns < 3 {
		t.Errorf("%d summaries", conns)
	}
}

// TestSCTPMessages: DDP segments over SCTP are gathered into RDMA messages
// as over MPA, the Read Response tied to its Read Request.
func TestSCTPMessages(t *testing.T) {
	s, _ := synth.NamedExt("sctp-ddp-enhanced", 1)
	var buf bytes.Buffer
	if _, err := s.Generate(&buf, nil); err != nil {
		t.Fatal(err)
	}
	var ops []string
	var latency bool
	for _, r := range decodeReader(t, &buf, flows.Options{}) {
		if r.Type == flows.RecMessage && r.Conn == 0 {
			ops = append(ops, fmt.Sprintf("%s/%d/%s", r.Message.Opcode, r.Message.Segments, r.Dir))
			if r.Message.RequestFrame != 0 && r.Message.Latency > 0 {
				latency = true
			}
		}
	}
	want := []string{"Send/1/i2r", "Send/1/r2i", "RDMA Write/2/i2r", "RDMA Read Request/1/i2r", "RDMA Read Response/2/r2i",
		"Send with Invalidate/1/i2r", "Send with SE/1/r2i", "Send/1/i2r"}
	if !reflect.DeepEqual(ops, want) || !latency {
		t.Errorf("messages %v (latency %v)", ops, latency)
	}
}

// FuzzOtherPacket feeds arbitrary RoCEv2 and SCTP payloads through the
// decoder: it must not panic.
func FuzzOtherPacket(f *testing.F) {
	for _, name := range []string{"roce-cm-v4", "sctp-ddp-enhanced"} {
		s, _ := synth.NamedExt(name, 1)
		var buf bytes.Buffer
		if _, err := s.Generate(&buf, nil); err != nil {
			f.Fatal(err)
		}
		src, err := capture.NewSource(bytes.NewReader(buf.Bytes()), "seed")
		if err != nil {
			f.Fatal(err)
		}
		for i := 0; i < 12; i++ {
			p, err := src.Next()
			if err != nil {
				break
			}
			f.Add(append([]byte(nil), p.Data...))
		}
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		// Two copies: the second exercises retransmission and exchange
		// lookup with the state the first left.
		var pcap bytes.Buffer
		w := newPcap(&pcap)
		w(frame)
		w(frame)
		src, err := capture.NewSource(bytes.NewReader(pcap.Bytes()), "fuzz")
		if err != nil {
			return
		}
		d := flows.NewDecoder(flows.Options{}, func(*flows.Record) {})
		for {
			p, err := src.Next()
			if err != nil {
				break
			}
			d.Packet(&p)
		}
		d.Close()
	})
}

// newPcap returns a function appending an Ethernet frame to a pcap stream.
func newPcap(w *bytes.Buffer) func([]byte) {
	pw := pcapgo.NewWriter(w)
	_ = pw.WriteFileHeader(65535, layers.LinkTypeEthernet)
	return func(frame []byte) {
		_ = pw.WritePacket(gopacket.CaptureInfo{Timestamp: time.Unix(1, 0), CaptureLength: len(frame), Length: len(frame)}, frame)
	}
}
