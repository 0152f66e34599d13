package model_test

import (
	"encoding/binary"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/iwarpkit/iwarpkit/dissect/mpa"
	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/internal/testutil"
	"github.com/iwarpkit/iwarpkit/internal/tui/model"
	"github.com/iwarpkit/iwarpkit/internal/tui/source"
)

// wireOctets assembles a record's octets from its frames, re-read from the
// capture, through BuildHex (the pane's own assembly): every octet shown
// for the layout, by record offset.
func wireOctets(t *testing.T, fr *source.Frames, l *model.Layout, frames []uint64) ([]byte, []bool) {
	t.Helper()
	raw, err := fr.ReadAll(frames)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]byte, l.Len)
	have := make([]bool, l.Len)
	for _, f := range raw {
		a := int(int32(f.Seq - l.Seq))
		for i, b := range f.Payload {
			if w := a + i; w >= 0 && w < l.Len && !have[w] {
				out[w], have[w] = b, true
			}
		}
	}
	lines := model.BuildHex(l, raw, nil)
	n := 0
	for _, ln := range lines {
		for _, c := range ln.Cells {
			if c.Valid {
				n++
			}
		}
	}
	got := 0
	for _, h := range have {
		if h {
			got++
		}
	}
	if n != got {
		t.Fatalf("hex pane shows %d octets, the frames hold %d of the record's", n, got)
	}
	return out, have
}

// TestLayoutAgainstOctets checks the layout of every complete FPDU of
// captures with markers, pad and CRC against the octets the capture
// holds, independently of the layout's own arithmetic: the octets it
// calls ULPDU_Length read as the record's ULPDU length (RFC 5044 §4.1),
// the CRC octets (least significant first) as its CRC, each marker as a
// marker whose FPDUPTR is the record's (§5.1), and for FPDUs whose CRC the
// decoder found good, CRC32c over the octets the layout calls neither
// marker nor CRC equals the CRC: every octet is where the layout says.
func TestLayoutAgainstOctets(t *testing.T) {
	files := []string{"marker-pad-crc", "marker-split-len", "marker-grid-end", "mss-span", "midstream-markers", "rev2-enhanced", "gap", "snaplen"}
	checked, crcChecked, markers := 0, 0, 0
	for _, name := range files {
		path := filepath.Join("../../../testdata/synth", name+".pcap")
		fr, err := source.OpenFrames(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range testutil.Decode(t, path, flows.Options{}) {
			if r.Type != flows.RecFPDU || r.FPDU.CRCStatus == flows.CRCIncomplete {
				continue
			}
			f := r.FPDU
			l := model.NewLayout(r)
			if l.Len != f.Len {
				t.Fatalf("%s frame %d: layout length %d, record %d", name, r.Frame, l.Len, f.Len)
			}
			oct, have := wireOctets(t, fr, l, f.Frames)
			for w, h := range have {
				if !h {
					t.Fatalf("%s frame %d: octet %d not in the frames", name, r.Frame, w)
				}
			}
			get := func(path string) []byte {
				var b []byte
				for _, s := range l.Spans(path) {
					b = append(b, oct[s.Start:s.End]...)
				}
				return b
			}
			if v := get("mpa.ulpdu_len"); len(v) != 2 || binary.BigEndian.Uint16(v) != f.ULPDULen {
				t.Errorf("%s frame %d: ulpdu_len octets %x, want %d", name, r.Frame, v, f.ULPDULen)
			}
			if v := get("mpa.crc"); len(v) != 4 || binary.LittleEndian.Uint32(v) != f.CRC {
				t.Errorf("%s frame %d: crc octets %x, want %08x", name, r.Frame, v, f.CRC)
			}
			for i, m := range f.Markers {
				p := "mpa.markers[" + strconv.Itoa(i) + "]"
				v := get(p + ".fpduptr")
				if len(v) != 2 || binary.BigEndian.Uint16(v) != m.FPDUPtr {
					t.Errorf("%s frame %d: %s octets %x, want %d", name, r.Frame, p, v, m.FPDUPtr)
				}
				markers++
			}
			if f.CRCStatus == flows.CRCOK {
				// PROTOCOL.md "CRC coverage": every octet of the FPDU but the
				// CRC field, markers included (RFC 5044 §4.1; Wireshark and
				// OSC compute it so).
				var covered []byte
				for w := range l.Len {
					if l.Class(w) != model.ClassCRC {
						covered = append(covered, oct[w])
					}
				}
				if mpa.CRC32C(covered) != f.CRC {
					t.Errorf("%s frame %d: CRC32c over the layout's non-CRC octets is not %08x", name, r.Frame, f.CRC)
				}
				crcChecked++
			}
			checked++
		}
		fr.Close()
	}
	if checked < 50 || crcChecked < 20 || markers < 15 {
		t.Fatalf("checked only %d FPDUs (%d CRCs, %d markers)", checked, crcChecked, markers)
	}
	t.Logf("%d FPDUs, %d CRCs, %d markers", checked, crcChecked, markers)
}
