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

// TestLayoutEmptyField: a field the layout places with no octets (a pad of
// 0 octets, PROTOCOL.md A.3: PAD is 0-3 octets between the ULPDU and the
// CRC) has none and must not borrow its parent's (mpa: ULPDU_Length and
// CRC); a non-empty pad has its own; a value the layout does not place
// (a marker's sequence number, derived from its position) still falls
// back to the octets of its parent, the 4-octet marker (RFC 5044 §5.1).
func TestLayoutEmptyField(t *testing.T) {
	tests := []struct {
		name  string
		file  string
		frame uint64
		nth   int // the nth FPDU of the frame, from 0
		path  string
		want  []model.Span // nil: none
		same  string       // or: the same octets as this path
	}{
		// tshark: ULPDU length 46, FPDU 52 octets = 2 + 46 + 4 CRC, no
		// iwarp_mpa.pad field.
		{"empty pad", "siw/crc_v2_rping.pcap", 9, 0, "mpa.pad", nil, ""},
		// tshark: iwarp_mpa.pad at frame offset 88, 2 octets; the FPDU
		// (iwarp_mpa.fpdu) starts at 66.
		{"pad of 2", "siw/basic_ib_read_bw_4096_v2_nocrc.pcap", 14, 0, "mpa.pad", []model.Span{{22, 24}}, ""},
		// The second FPDU of frame 6 has one marker (iwarpdump -v:
		// "Send ... MSN 2 ... markers 1").
		{"derived value", "synth/marker-split-len.pcap", 6, 1, "mpa.markers[0].seq", nil, "mpa.markers[0]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var l *model.Layout
			n := 0
			for _, r := range testutil.Decode(t, filepath.Join("../../../testdata", tc.file), flows.Options{}) {
				if r.Type == flows.RecFPDU && r.Frame == tc.frame {
					if n == tc.nth {
						l = model.NewLayout(r)
						break
					}
					n++
				}
			}
			if l == nil {
				t.Fatalf("no FPDU in frame %d", tc.frame)
			}
			got, known := l.Lookup(tc.path)
			if !known {
				t.Fatalf("%s: not known to the layout", tc.path)
			}
			want := tc.want
			if tc.same != "" {
				want = l.Spans(tc.same)
				if n := spanLen(want); n != 4 {
					t.Fatalf("%s: %d octets %v, want a 4-octet marker", tc.same, n, want)
				}
			}
			if len(got) != len(want) {
				t.Fatalf("%s: spans %v, want %v", tc.path, got, want)
			}
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("%s: spans %v, want %v", tc.path, got, want)
				}
			}
		})
	}
}

func spanLen(sp []model.Span) int {
	n := 0
	for _, s := range sp {
		n += s.End - s.Start
	}
	return n
}
