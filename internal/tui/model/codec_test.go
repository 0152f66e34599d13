package model

import (
	"bytes"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/format"
	"github.com/iwarpkit/iwarpkit/internal/testutil"
)

// captures returns every capture in the repository's testdata: the real
// siw ones (whole, cut by the snap length, started mid-stream), the rxe
// and failed-connect ones, and the generated ones.
func captures(t testing.TB) []string {
	t.Helper()
	var out []string
	for _, g := range []string{"../../../testdata/siw/*.pcap", "../../../testdata/synth/*.pcap", "../../../testdata/synthext/*.pcap",
		"../../../testdata/snaplen/*.pcap", "../../../testdata/midstream/*.pcap", "../../../testdata/rxe/*.pcap", "../../../testdata/tcp/*.pcap"} {
		m, err := filepath.Glob(g)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m...)
	}
	if len(out) < 10 {
		t.Fatalf("found only %d test captures", len(out))
	}
	return out
}

// TestCodecRoundTrip: every record of every test capture comes back from
// the index with the same JSON Lines form (format.Fields, the contract the
// UI shows) and the same non-JSON fields, Preview excepted.
func TestCodecRoundTrip(t *testing.T) {
	for _, path := range captures(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			recs := testutil.Decode(t, path, flows.Options{})
			x := NewIndex()
			x.Add(recs...)
			if x.Len() != len(recs) {
				t.Fatalf("Len %d, want %d", x.Len(), len(recs))
			}
			for i, want := range recs {
				got := x.Record(i)
				wj := format.AppendJSON(nil, format.Fields(want))
				gj := format.AppendJSON(nil, format.Fields(got))
				if !bytes.Equal(wj, gj) {
					t.Fatalf("record %d:\n got %s\nwant %s", i, gj, wj)
				}
				if x.Entry(i).Frame != want.Frame || x.Entry(i).Kind != KindOf(want) {
					t.Errorf("record %d: entry %+v", i, x.Entry(i))
				}
				if want.Type == flows.RecFPDU {
					w, g := *want.FPDU, *got.FPDU
					w.Preview, g.Preview = nil, nil
					if w.SegErr != nil && g.SegErr != nil && w.SegErr.Error() == g.SegErr.Error() {
						w.SegErr, g.SegErr = nil, nil
					}
					if !exportedEqual(normFPDU(w), normFPDU(g)) {
						t.Fatalf("record %d FPDU:\n got %+v\nwant %+v", i, g, w)
					}
				}
				if want.Type == flows.RecMPA && !exportedEqual(normMPA(*want.MPA), normMPA(*got.MPA)) {
					t.Fatalf("record %d MPA:\n got %+v\nwant %+v", i, got.MPA, want.MPA)
				}
				if want.Type == flows.RecMessage && !exportedEqual(*want.Message, *got.Message) {
					t.Fatalf("record %d message:\n got %+v\nwant %+v", i, got.Message, want.Message)
				}
				if !want.TS.Equal(got.TS) || want.Src != got.Src || want.Dst != got.Dst || want.Dir != got.Dir {
					t.Fatalf("record %d header differs", i)
				}
				ws, wok := want.TCPStream()
				if gs, gok := got.TCPStream(); gs != ws || gok != wok {
					t.Fatalf("record %d: tcp.stream %d %v, want %d %v", i, gs, gok, ws, wok)
				}
			}
		})
	}
}

// normMPA and normFPDU treat empty and nil slices alike.
func normMPA(m flows.MPARecord) flows.MPARecord {
	if len(m.Frame.PD) == 0 {
		m.Frame.PD = nil
	}
	if len(m.Findings) == 0 {
		m.Findings = nil
	}
	return m
}

func normFPDU(f flows.FPDURecord) flows.FPDURecord {
	if len(f.Markers) == 0 {
		f.Markers = nil
	}
	if len(f.Findings) == 0 {
		f.Findings = nil
	}
	return f
}

// exportedEqual compares the exported fields of two structs (the decoder
// may keep unexported scratch space in its records).
func exportedEqual(a, b any) bool {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	for i := range va.NumField() {
		if !va.Type().Field(i).IsExported() {
			continue
		}
		if !reflect.DeepEqual(va.Field(i).Interface(), vb.Field(i).Interface()) {
			return false
		}
	}
	return true
}
