package flows_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/synth"
)

// TestHeldPackSameOutput: a decode whose ordering queue packs every FPDU
// record it holds (heldpack.go) gives the output of one that packs none,
// with one Decoder and with 2 and 3 workers, on every bundled capture and
// on synth's captures of many messages open at once and of one long
// message, where records wait by the thousand.
func TestHeldPackSameOutput(t *testing.T) {
	dir := t.TempDir()
	files, _ := filepath.Glob("../testdata/*/*.pcap")
	for _, s := range []struct {
		kind string
		n    int
	}{{"open", 300}, {"longmsg", 4}, {"resets", 200}} {
		var buf bytes.Buffer
		if err := synth.WriteStress(&buf, s.kind, s.n, 1); err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(dir, s.kind+".pcap")
		if err := os.WriteFile(f, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	old := flows.SetHeldPackAt(1 << 30)
	defer flows.SetHeldPackAt(old)
	before := flows.HeldPacked()
	for _, f := range files {
		flows.SetHeldPackAt(1 << 30)
		want, _, _ := sequential(t, f, 0)
		wantPar, _, _, ok := chunked(t, f, 2, 0)
		if flows.HeldPacked() != before {
			t.Fatal("records packed below the threshold")
		}
		flows.SetHeldPackAt(0)
		if got, _, _ := sequential(t, f, 0); !bytes.Equal(got, want) {
			t.Errorf("%s: one Decoder packing its held records: output differs", filepath.Base(f))
		}
		for _, w := range []int{2, 3} {
			if got, _, _, _ := chunked(t, f, w, 0); ok && !bytes.Equal(got, wantPar) {
				t.Errorf("%s: %d workers packing the held records: output differs", filepath.Base(f), w)
			}
		}
		before = flows.HeldPacked()
	}
	if before == 0 {
		t.Error("no record was packed")
	}
	t.Logf("%d files, %d records packed", len(files), before)
}
