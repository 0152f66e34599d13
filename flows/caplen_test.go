package flows_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/synth"
)

// TestCapLenAboveLen: records whose captured length is above their
// original length (every frame of the initiator's FPDUs, trigger
// caplen-above-len) are decoded as tshark decodes them: every FPDU the
// generator sent (its truth) comes out whole with its CRC good, nothing
// is taken for capture loss, and one cap.caplen_above_len names the first
// such frame. One and two workers reading the file in chunks give the
// same output as one Decoder.
func TestCapLenAboveLen(t *testing.T) {
	var pcap bytes.Buffer
	tr := triggers["caplen-above-len"]
	res, err := synth.Generate(tr.gen(), &pcap, nil)
	if err != nil {
		t.Fatal(err)
	}
	tr.patch(t, pcap.Bytes(), res)
	recs := decodeReader(t, bytes.NewReader(pcap.Bytes()), flows.Options{})

	sent := truthFPDUs(res, hostI.String()+":40100")
	if len(sent) < 2 {
		t.Fatalf("%d FPDUs from the initiator in the truth", len(sent))
	}
	got := map[uint64]*flows.FPDURecord{} // by first frame
	for _, r := range recs {
		if r.FPDU != nil {
			got[r.Frame] = r.FPDU
		}
	}
	for _, f := range sent {
		fp := got[f.Frames[0]]
		if fp == nil || fp.Seq != f.Seq || fp.Len != f.Len || fp.CRCStatus != flows.CRCOK {
			t.Errorf("FPDU of frame %d (seq %d, %d octets): decoded %+v", f.Frames[0], f.Seq, f.Len, fp)
		}
	}
	fs := findingsOf(recs)
	if n := len(fs["cap.caplen_above_len"]); n != 1 {
		t.Errorf("%d cap.caplen_above_len findings, want 1", n)
	}
	for _, code := range []string{"tcp.gap", "mpa.sync_lost", "mpa.responder_first"} {
		if len(fs[code]) > 0 {
			t.Errorf("%s: %v", code, fs[code])
		}
	}

	path := filepath.Join(t.TempDir(), "caplen.pcap")
	if err := os.WriteFile(path, pcap.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	want, _, _ := sequential(t, path, 0)
	for _, w := range []int{1, 2} {
		if out, _, _, _ := chunked(t, path, w, 0); !bytes.Equal(out, want) {
			t.Errorf("%d workers in chunks: output differs from one Decoder's", w)
		}
	}
}
