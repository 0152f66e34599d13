package replay

import (
	"bufio"
	"context"
	"encoding/json"
	"maps"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/internal/testutil"
	"github.com/iwarpkit/iwarpkit/synth"
)

// truthMarkers reads a synth ground-truth file and returns, for each
// direction "src>dst", whether the FPDUs sent that way carry markers, and
// the initiator (the source of the "i2r" records).
func truthMarkers(t *testing.T, path string) (map[string]bool, string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]bool{}
	initiator := ""
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r struct {
			Type, Src, Dst, Dir string
			MPA                 struct {
				Markers []json.RawMessage
			}
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		if r.Type != "fpdu" {
			continue
		}
		k := r.Src + ">" + r.Dst
		out[k] = out[k] || len(r.MPA.Markers) > 0
		if r.Dir == "i2r" {
			initiator = r.Src
		}
	}
	if len(out) != 2 || initiator == "" {
		t.Fatalf("%s: FPDUs in %d directions, initiator %q", path, len(out), initiator)
	}
	return out, initiator
}

// decodedMarkers decodes a capture as iwarpdump does and returns, for each
// direction "src>dst", whether its FPDUs carry markers.
func decodedMarkers(t *testing.T, path string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, r := range testutil.OfType(testutil.Decode(t, path, flows.Options{}), flows.RecFPDU) {
		k := r.Src.String() + ">" + r.Dst.String()
		out[k] = out[k] || len(r.FPDU.Markers) > 0
	}
	return out
}

// midstreamFiles are captures that start after the MPA exchange, with
// markers: the library's midstream-markers (both directions), and the same
// traffic with markers from responder to initiator only, so that a replay
// that swapped the directions shows.
func midstreamFiles(t *testing.T) []string {
	c := synth.Conn{
		Initiator:    netip.MustParseAddrPort("192.0.2.2:40021"),
		Responder:    netip.MustParseAddrPort("192.0.2.1:7174"),
		Handshake:    true,
		MPA:          &synth.MPAParams{Request: synth.MPAFrame{Rev: 1, M: true, C: true}, Reply: synth.MPAFrame{Rev: 1, C: true}},
		Segmentation: synth.SegmentPerRecord,
	}
	for range 2 {
		c.Ops = append(c.Ops,
			synth.Op{Dir: synth.I2R, Kind: synth.Send, Size: 64},
			synth.Op{Dir: synth.R2I, Kind: synth.Send, Size: 700},
			synth.Op{Dir: synth.I2R, Kind: synth.Write, Size: 1600, STag: 0x1000, TO: 0x10000},
			synth.Op{Dir: synth.I2R, Kind: synth.Read, Size: 1500, STag: 0x2000, TO: 0x20000, SrcSTag: 0x3000, SrcTO: 0x30000},
			synth.Op{Dir: synth.R2I, Kind: synth.Write, Size: 900, STag: 0x4000},
			synth.Op{Dir: synth.I2R, Kind: synth.Send, Size: 1})
	}
	c.Impair.StartAt = &synth.StartAt{Dir: synth.I2R, Offset: 3000}
	p := filepath.Join(t.TempDir(), "midstream-markers-r2i.pcap")
	if _, err := synth.WriteFiles(synth.Scenario{Conns: []synth.Conn{c}}, p); err != nil {
		t.Fatal(err)
	}
	return []string{"../testdata/synth/midstream-markers.pcap", p}
}

// TestMidstreamMarkers: a capture that starts mid-stream has no MPA frames
// to say where markers go, but its FPDUs show it (the decoder recovers the
// grid). The replay carries the recorded markers into the new connection,
// per direction: the replay's capture has markers in exactly the directions
// (source > destination) the synth ground truth has them, as iwarpdump's
// decoder finds them, and the loopback report says so; a warning says the
// MPA exchange could not be replayed.
func TestMidstreamMarkers(t *testing.T) {
	for _, path := range midstreamFiles(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			want, initiator := truthMarkers(t, synth.TruthPath(path))
			if got := decodedMarkers(t, path); !maps.Equal(got, want) {
				t.Fatalf("the decoder finds markers %v in the original, the truth %v", got, want)
			}
			ss := load(t, path, LoadOptions{})
			if len(ss) != 1 {
				t.Fatalf("%d scripts", len(ss))
			}
			s := ss[0]
			if s.Initiator.String() != initiator {
				t.Errorf("initiator %v, the truth's %s", s.Initiator, initiator)
			}
			i2r := s.Initiator.String() + ">" + s.Responder.String()
			r2i := s.Responder.String() + ">" + s.Initiator.String()
			if s.MarkersI2R != want[i2r] || s.MarkersR2I != want[r2i] {
				t.Errorf("script markers i2r %v r2i %v, the truth %v %v", s.MarkersI2R, s.MarkersR2I, want[i2r], want[r2i])
			}
			if !strings.Contains(strings.Join(s.Warnings, "\n"), "mid-stream") {
				t.Errorf("no warning about the mid-stream start: %q", s.Warnings)
			}

			replayed, rep := toPcap(t, ss, Options{})
			if !rep.OK() {
				t.Fatalf("replay: %v %v", rep.Conns[0].Mismatches, rep.Conns[0].Err)
			}
			if got := decodedMarkers(t, replayed); !maps.Equal(got, want) {
				t.Errorf("the replay's capture has markers %v, the original %v", got, want)
			}

			rep, err := Loopback(context.Background(), ss, Options{})
			if err != nil || !rep.OK() {
				t.Fatalf("loopback: %v %v", err, rep.Conns[0].Err)
			}
			o := rep.Conns[0].Outcome
			if o.MarkersI2R != want[i2r] || o.MarkersR2I != want[r2i] || !o.CRC {
				t.Errorf("loopback outcome %v; the original has markers i2r %v r2i %v, CRC on", o, want[i2r], want[r2i])
			}
		})
	}
}
