package format

import (
	"path/filepath"
	"testing"

	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/internal/testutil"
)

// TestAppendFieldsOmit: for every record of the bundled captures and every
// combination of Omit groups, every key whose group (Reads) is kept is
// listed with the value AppendFields gives it, in the same order, and
// nothing is listed that AppendFields does not list. That is what a reader
// of the kept keys (the display filter) relies on.
func TestAppendFieldsOmit(t *testing.T) {
	var files []string
	for _, dir := range []string{"siw", "synth", "synthext"} {
		m, err := filepath.Glob(filepath.Join("..", "testdata", dir, "*.pcap"))
		if err != nil || len(m) == 0 {
			t.Fatalf("no captures in testdata/%s: %v", dir, err)
		}
		files = append(files, m...)
	}
	types := map[flows.RecordType]int{}
	omitted := 0
	for _, file := range files {
		for _, r := range testutil.Decode(t, file, flows.Options{}) {
			types[r.Type]++
			full := AppendFields(nil, r)
			for omit := Omit(0); omit <= OmitAll; omit++ {
				part := AppendFieldsOmit(nil, r, omit)
				j := 0
				for _, kv := range full {
					if Reads(kv.Key)&omit != 0 {
						if j < len(part) && part[j].Key == kv.Key {
							j++ // kept anyway (or emptied: ts, src, dst)
						} else {
							omitted++
						}
						continue
					}
					if j >= len(part) || part[j].Key != kv.Key {
						t.Fatalf("%s frame %d (%v), omit %#x: %q missing", file, r.Frame, r.Type, omit, kv.Key)
					}
					if a, b := string(AppendJSON(nil, []KV{kv})), string(AppendJSON(nil, []KV{part[j]})); a != b {
						t.Fatalf("%s frame %d, omit %#x: %s, want %s", file, r.Frame, omit, b, a)
					}
					j++
				}
				if j != len(part) {
					t.Fatalf("%s frame %d, omit %#x: %q listed but not by AppendFields", file, r.Frame, omit, part[j].Key)
				}
			}
		}
	}
	for _, typ := range []flows.RecordType{flows.RecMPA, flows.RecFPDU, flows.RecMessage, flows.RecFinding, flows.RecConn} {
		if types[typ] == 0 {
			t.Errorf("no %v record in the captures", typ)
		}
	}
	if omitted == 0 {
		t.Error("nothing was ever omitted")
	}
}

// TestReads: the keys of every record type map to the group that lists
// them; keys Reads does not know need every group.
func TestReads(t *testing.T) {
	for _, c := range []struct {
		key  string
		want Omit
	}{
		{"v", 0}, {"type", 0}, {"frame", 0}, {"conn", 0}, {"ts", OmitTS}, {"src", OmitAddrs}, {"dir", OmitAddrs},
		{"seq", OmitTCP}, {"frames", OmitTCP}, {"mpa.crc_status", OmitMPA}, {"mpa.markers", OmitMPA},
		{"ddp.stag", OmitDDP}, {"rdmap.term", OmitRDMAP | OmitRDMAPObjects}, {"rdmap.term.code", OmitRDMAP | OmitRDMAPObjects},
		{"rdmap.read", OmitRDMAP | OmitRDMAPObjects}, {"rdmap.read.size", OmitRDMAP | OmitRDMAPObjects},
		{"rdmap.opcode", OmitRDMAP}, {"rdmap.readx", OmitRDMAP}, {"payload_len", OmitRDMAP},
		{"findings", OmitFindings}, {"severity", OmitAll}, {"opcode", OmitAll}, {"", OmitAll}, {"mpa", OmitAll},
	} {
		if got := Reads(c.key); got != c.want {
			t.Errorf("Reads(%q) = %#x, want %#x", c.key, got, c.want)
		}
	}
}
