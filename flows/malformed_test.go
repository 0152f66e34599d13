package flows_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/internal/testutil"
	"github.com/iwarpkit/iwarpkit/synth"
)

// TestMalformedTCP: segments of an iWARP connection whose TCP Data Offset
// is below 5 words (two of the initiator's, one of the responder's) are
// each reported as tcp.malformed at their frame, the frames tshark marks
// tcp.bogus_header_length; the segments around them decode as sent (the
// generator's truth); one Decoder and two workers reading the file in
// chunks give the same output.
func TestMalformedTCP(t *testing.T) {
	var pcap bytes.Buffer
	sc := withOps(append(opening(),
		synth.Op{Dir: synth.I2R, Kind: synth.Send, Size: 100},
		synth.Op{Dir: synth.I2R, Kind: synth.Send, Size: 100},
		synth.Op{Dir: synth.R2I, Kind: synth.Send, Size: 40},
		synth.Op{Dir: synth.R2I, Kind: synth.Send, Size: 40},
		synth.Op{Dir: synth.I2R, Kind: synth.Send, Size: 100})...)
	res, err := synth.Generate(sc, &pcap, nil)
	if err != nil {
		t.Fatal(err)
	}
	i2r, r2i := truthFPDUs(res, hostI.String()+":40100"), truthFPDUs(res, hostR.String()+":7174")
	bad := []uint64{i2r[1].Frames[0], i2r[3].Frames[0], r2i[2].Frames[0]}
	for _, f := range bad {
		setDataOffset(t, pcap.Bytes(), f, 4)
	}
	slices.Sort(bad)
	recs := decodeReader(t, bytes.NewReader(pcap.Bytes()), flows.Options{})
	var got []uint64
	fpdus := map[uint64]bool{}
	for _, r := range recs {
		if r.Finding != nil && r.Finding.Code == "tcp.malformed" {
			got = append(got, r.Frame)
		}
		if r.FPDU != nil && r.FPDU.CRCStatus == flows.CRCOK {
			fpdus[r.Frame] = true
		}
	}
	if !slices.Equal(got, bad) {
		t.Errorf("tcp.malformed at frames %v, want the patched %v", got, bad)
	}
	for _, f := range append(i2r, r2i...) {
		if !slices.Contains(bad, f.Frames[0]) && !fpdus[f.Frames[0]] {
			t.Errorf("FPDU of frame %d (%s #%d) not decoded whole", f.Frames[0], f.Src, f.Index)
		}
	}

	path := filepath.Join(t.TempDir(), "bad.pcap")
	if err := os.WriteFile(path, pcap.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	want, _, _ := sequential(t, path, 0)
	if out, _, _, _ := chunked(t, path, 2, 0); !bytes.Equal(out, want) {
		t.Error("two workers in chunks: output differs from one Decoder's")
	}

	tshark := testutil.RequireTshark(t)
	out, err := exec.Command(tshark, "-r", path, "-Y", "tcp.bogus_header_length", "-T", "fields", "-e", "frame.number").Output()
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	var marked []uint64
	for _, l := range strings.Fields(string(out)) {
		n, _ := strconv.ParseUint(l, 10, 64)
		marked = append(marked, n)
	}
	if !slices.Equal(marked, bad) {
		t.Errorf("tshark marks frames %v, we %v", marked, got)
	}
}
