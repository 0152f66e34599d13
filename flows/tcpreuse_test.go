package flows_test

import (
	"bytes"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
			raw := pcap.Bytes()
			recs := decodeReader(t, bytes.NewReader(raw), flows.Options{})
			var want []int // the truth's FPDUs per connection
			for _, r := range res.Records {
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
			if len(got) != len(want) || len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
				t.Errorf("connections with FPDUs %v, want %v (the generator's)", got, want)
			}
			if codes := findingCodes(recs); len(codes) > 0 {
				t.Errorf("findings %v, want none", codes)
			}
			missed, captured := compareTruth(t, res.Records, recs)
			if missed > 0 {
				t.Errorf("%d of %d FPDUs not reported", missed, captured)
			}
			// tshark: two TCP streams.
			tshark := testutil.RequireTshark(t)
			path := filepath.Join(t.TempDir(), "reuse.pcap")
			if err := os.WriteFile(path, raw, 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(tshark, "-r", path, "-T", "fields", "-e", "tcp.stream").Output()
			if err != nil {
				t.Fatal(err)
			}
			streams := map[string]bool{}
			for _, l := range strings.Fields(string(out)) {
				streams[l] = true
			}
			if len(streams) != len(got) {
				t.Errorf("tshark has %d TCP streams, we %d connections", len(streams), len(got))
			}
		})
	}
}
