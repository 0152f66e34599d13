package flows_test

import (
	"bytes"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/internal/testutil"
	"github.com/iwarpkit/iwarpkit/synth"
)

// findingCodes returns the codes of every finding of recs, standalone or
// attached to a record.
func findingCodes(recs []*flows.Record) []string {
	var codes []string
	for _, r := range recs {
		if r.Finding != nil {
			codes = append(codes, r.Finding.Code)
		}
		if r.MPA != nil {
			for _, f := range r.MPA.Findings {
				codes = append(codes, f.Code)
			}
		}
		if r.FPDU != nil {
			for _, f := range r.FPDU.Findings {
				codes = append(codes, f.Code)
			}
		}
	}
	return codes
}

// TestPortReuseNewISN: a connection whose close the capture does not show
// (it stays open, or one side's FIN is all that was seen), then a new
// connection on the same endpoints, SYN first with a new ISN (RFC 9293
// §3.4). The generator made two connections (its truth has two conn
// records and their FPDUs), and tshark starts a second tcp.stream at the
// new SYN: two connections, each with its FPDUs, and nothing wrong on the
// wire. The second was taken for the first: its SYN a conflicting one
// (tcp.retransmit_conflict), the distance between the ISNs a tcp.gap of
// about 2 MB, its FPDUs after it resynchronised and its Retrans column
// counting every segment.
func TestPortReuseNewISN(t *testing.T) {
	ini := netip.MustParseAddrPort("192.0.2.2:40001")
	rsp := netip.MustParseAddrPort("192.0.2.1:7174")
	ops := []synth.Op{
		{Dir: synth.I2R, Kind: synth.Write, Size: 3000, STag: 0x1000, TO: 0x10000},
		{Dir: synth.R2I, Kind: synth.Send, Size: 200},
	}
	mk := func(isnI, isnR uint32, close synth.CloseKind, delay time.Duration) synth.Conn {
		return synth.Conn{Initiator: ini, Responder: rsp, Handshake: true, ISNI: isnI, ISNR: isnR,
			MPA:   &synth.MPAParams{Request: synth.MPAFrame{Rev: 1, C: true}, Reply: synth.MPAFrame{Rev: 1, C: true}},
			Ops:   ops,
			Close: synth.Close{Kind: close}, StartDelay: delay}
	}
	for _, tc := range []struct {
		name  string
		first synth.CloseKind
		delay time.Duration
		isn2  uint32 // the second connection's ISN (initiator)
	}{
		{"first-open", synth.CloseNone, 2 * time.Second, 3000000000},
		{"first-open-isn-below", synth.CloseNone, 2 * time.Second, 900000},
		{"first-open-long-idle", synth.CloseNone, 300 * time.Second, 3000000000},
		{"first-closed", synth.CloseFIN, 2 * time.Second, 3000000000}, // worked before: the control
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := synth.Scenario{Seed: 3, Conns: []synth.Conn{
				mk(1000000, 5000000, tc.first, 0),
				mk(tc.isn2, 7000000, synth.CloseFIN, tc.delay),
			}}
			var pcap bytes.Buffer
			res, err := synth.Generate(sc, &pcap, nil)
			if err != nil {
				t.Fatal(err)
			}
			checkReuse(t, pcap.Bytes(), res.Records)
		})
	}
}

// checkReuse decodes raw, a capture of connections on the same endpoints
// with nothing wrong on the wire, and checks it against truth, the
// generator's: its connections, each with its FPDUs, no finding and no
// retransmission; and against tshark: the TCP stream of every record is
// tshark's tcp.stream for its frame.
func checkReuse(t *testing.T, raw []byte, truth []synth.Record) {
	t.Helper()
	recs := decodeReader(t, bytes.NewReader(raw), flows.Options{})
	var want []int // the truth's FPDUs per connection
	for _, r := range truth {
		if c, ok := r.(*synth.TruthConn); ok {
			want = append(want, c.FPDUsCaptured)
		}
	}
	var got []int
	for _, r := range testutil.OfType(recs, flows.RecConn) {
		got = append(got, r.Summary.FPDUs)
		if r.Summary.TCP.Retransmissions != 0 {
			t.Errorf("connection %d: %d retransmissions, want 0", r.Conn, r.Summary.TCP.Retransmissions)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("connections with FPDUs %v, want %v (the generator's)", got, want)
	}
	if codes := findingCodes(recs); len(codes) > 0 {
		t.Errorf("findings %v, want none", codes)
	}
	if missed, captured := compareTruth(t, truth, recs); missed > 0 {
		t.Errorf("%d of %d FPDUs not reported", missed, captured)
	}
	testutil.RequireTshark(t)
	path := filepath.Join(t.TempDir(), "reuse.pcap")
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	streams := testutil.TsharkColumn(t, []string{"-r", path, "-T", "fields", "-e", "frame.number", "-e", "tcp.stream"})
	for _, r := range recs {
		if s, ok := r.TCPStream(); ok && strconv.Itoa(s) != streams[r.Frame] {
			t.Errorf("%v record of frame %d: TCP stream %d, tshark's %s", r.Type, r.Frame, s, streams[r.Frame])
		}
	}
}

// TestSYNAgainNewISN: a SYN that got no answer, then, a second later, a
// SYN from the same port with another ISN, answered: a new connection
// attempt (TCP sends a SYN again with the same ISN, RFC 9293 §3.8.1), as
// tshark's new tcp.stream at it says. The connection is the second SYN's
// and decodes as the generator made it; it took the first SYN for its
// own and the second for a contradicting one (tcp.retransmit_conflict),
// and its octets for a tcp.gap of the distance between the ISNs.
func TestSYNAgainNewISN(t *testing.T) {
	for _, tc := range []struct {
		name   string
		oldISN uint32
	}{
		{"isn-below", 77777},
		{"isn-above", 3000000000},
		{"isn-one-below", isnI - 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := baseConn(43000)
			c.Ops = []synth.Op{{Dir: synth.I2R, Kind: synth.Write, Size: 3000, STag: 0x51}, {Dir: synth.R2I, Kind: synth.Send, Size: 100}}
			var pcap bytes.Buffer
			res, err := synth.Generate(synth.Scenario{Conns: []synth.Conn{c}}, &pcap, nil)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "gen.pcap")
			if err := os.WriteFile(path, pcap.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			frames, times, _ := captureFrames(t, path)
			first := withSeq(t, frames[0], tc.oldISN)
			frames = append([][]byte{first}, frames...)
			times = append([]time.Time{times[0].Add(-time.Second)}, times...)
			_, raw := writePcap(t, "synagain.pcap", frames, times)
			checkReuse(t, raw, res.Records)
		})
	}
}

// withSeq returns a copy of an Ethernet/IPv4 TCP frame with sequence
// number seq, its checksum set again.
func withSeq(t *testing.T, frame []byte, seq uint32) []byte {
	t.Helper()
	return withSeqFlags(t, frame, seq, false)
}

// withSeqFlags is withSeq, with FIN set too when fin is.
func withSeqFlags(t *testing.T, frame []byte, seq uint32, fin bool) []byte {
	t.Helper()
	p := gopacket.NewPacket(frame, layers.LayerTypeEthernet, gopacket.Default)
	eth, _ := p.Layer(layers.LayerTypeEthernet).(*layers.Ethernet)
	ip, _ := p.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
	tcp, _ := p.Layer(layers.LayerTypeTCP).(*layers.TCP)
	if eth == nil || ip == nil || tcp == nil {
		t.Fatal("not an Ethernet/IPv4 TCP frame")
	}
	tcp.Seq = seq
	tcp.FIN = tcp.FIN || fin
	if err := tcp.SetNetworkLayerForChecksum(ip); err != nil {
		t.Fatal(err)
	}
	b := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(b, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true},
		eth, ip, tcp, gopacket.Payload(tcp.Payload)); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestSentAgainAfterClose: after a connection closed (both FINs
// acknowledged), a segment of octets it had sent comes again, as when
// the acknowledgement of the original was lost and the sender's timer
// fired: its last data segment, an earlier one, or its last data
// segment with its FIN. tshark keeps it in the connection's tcp.stream;
// the generator made one connection. It was taken for a new connection
// that started mid-stream, with an FPDU, an mpa.midstream_lock and a row
// of its own in -z conn.
func TestSentAgainAfterClose(t *testing.T) {
	for _, tc := range []struct {
		name string
		last int // which data segment of the initiator, from its last (0)
		fin  bool
	}{
		{"last", 0, false},
		{"earlier", 2, false},
		{"last-with-fin", 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := baseConn(44000)
			c.Ops = []synth.Op{{Dir: synth.I2R, Kind: synth.Write, Size: 3000, STag: 0x51}, {Dir: synth.R2I, Kind: synth.Send, Size: 100}}
			var pcap bytes.Buffer
			res, err := synth.Generate(synth.Scenario{Conns: []synth.Conn{c}}, &pcap, nil)
			if err != nil {
				t.Fatal(err)
			}
			pkts := testutil.ReadPackets(pcap.Bytes())
			var data []int
			for i, p := range pkts {
				if p.Src == c.Initiator && len(p.Payload) > 0 {
					data = append(data, i)
				}
			}
			path := filepath.Join(t.TempDir(), "gen.pcap")
			if err := os.WriteFile(path, pcap.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			frames, times, _ := captureFrames(t, path)
			again := frames[data[len(data)-1-tc.last]]
			if tc.fin {
				// The FIN goes with the last octets (the FIN's sequence
				// number is the one after them).
				again = withFIN(t, again)
			}
			frames = append(frames, again)
			times = append(times, times[len(times)-1].Add(200*time.Millisecond))
			_, raw := writePcap(t, "again.pcap", frames, times)
			checkReuse(t, raw, res.Records)
		})
	}
}

// withFIN returns a copy of an Ethernet/IPv4 TCP frame with FIN set, its
// checksum set again.
func withFIN(t *testing.T, frame []byte) []byte {
	t.Helper()
	p := gopacket.NewPacket(frame, layers.LayerTypeEthernet, gopacket.Default)
	tcp, _ := p.Layer(layers.LayerTypeTCP).(*layers.TCP)
	if tcp == nil {
		t.Fatal("not a TCP frame")
	}
	return withSeqFlags(t, frame, tcp.Seq, true)
}
