package flows_test

import (
	"bytes"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/iwarpkit/iwarpkit/dissect/rdmap"
	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/internal/testutil"
)

// snapCut returns a classic little-endian pcap file with every record cut
// to snap octets, as `editcap -s snap` or a capture with `tcpdump -s snap`
// gives it: the record keeps its original length.
func snapCut(t testing.TB, b []byte, snap int) []byte {
	t.Helper()
	if len(b) < 24 || binary.LittleEndian.Uint32(b) != 0xa1b2c3d4 {
		t.Fatal("not a little-endian classic pcap")
	}
	out := append([]byte(nil), b[:24]...)
	binary.LittleEndian.PutUint32(out[16:], uint32(snap))
	for off := 24; off+16 <= len(b); {
		incl := int(binary.LittleEndian.Uint32(b[off+8:]))
		rec := b[off+16 : off+16+incl]
		keep := min(incl, snap)
		h := append([]byte(nil), b[off:off+16]...)
		binary.LittleEndian.PutUint32(h[8:], uint32(keep))
		out = append(append(out, h...), rec[:keep]...)
		off += 16 + incl
	}
	return out
}

// snapCaptures are the real siw captures the snap-length tests cut.
func snapCaptures(t testing.TB) []string {
	names, err := filepath.Glob("../testdata/siw/*.pcap")
	if err != nil || len(names) < 10 {
		t.Fatalf("siw captures: %v (%d)", err, len(names))
	}
	return names
}

// TestSnaplenCut cuts every real siw capture to snap lengths that keep 24,
// 30, 44 and 62 octets of TCP payload after its headers (66 octets in IPv4
// with TCP timestamps), and 8 and 18, which cut the MPA Request's header,
// and checks the decode
// against the decode of the whole capture, which TestTsharkDifferential
// ties to tshark:
//   - every iWARP connection is still one, with the same endpoints; with
//     the MPA header captured, the same state, revision, CRC and markers;
//   - every MPA Request and Reply is decoded at its frame from its header,
//     with the captured prefix of its private data;
//   - every Terminate is still explained, from its control word;
//   - no tcp.gap: the cut octets are not capture loss; one cap.snaplen per
//     connection whose segments were cut, and the conn record counts the
//     cut segments that the capture's own records show.
func TestSnaplenCut(t *testing.T) {
	for _, path := range snapCaptures(t) {
		orig, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		full := testutil.DecodeBytes(t, orig, flows.Options{})
		hdr := 0 // the octets before the TCP payload: 66 in IPv4, 86 in IPv6
		for _, p := range testutil.ReadPackets(orig) {
			if len(p.Payload) > 0 {
				hdr = p.CapLen - len(p.Payload)
				break
			}
		}
		for _, payload := range []int{8, 18, 24, 30, 44, 62} {
			snap := hdr + payload
			t.Run(filepath.Base(path)+"/"+strconv.Itoa(snap), func(t *testing.T) {
				cut := snapCut(t, orig, snap)
				got := testutil.DecodeBytes(t, cut, flows.Options{})
				checkSnapCut(t, full, got, cutSegments(t, cut), payload >= 20)
			})
		}
	}
}

// cutSegments counts, per connection (by its endpoints in either order),
// the packets whose TCP payload the capture cut.
func cutSegments(t testing.TB, b []byte) map[[2]string]int {
	n := map[[2]string]int{}
	for _, p := range testutil.ReadPackets(b) {
		if p.PayloadWireLen > len(p.Payload) {
			n[pairKey(p.Src.String(), p.Dst.String())]++
		}
	}
	return n
}

func pairKey(a, b string) [2]string {
	if a > b {
		a, b = b, a
	}
	return [2]string{a, b}
}

func checkSnapCut(t *testing.T, full, got []*flows.Record, cutSegs map[[2]string]int, header bool) {
	t.Helper()
	conns := map[[2]string]*flows.ConnSummary{}
	snapFindings := map[int]int{}
	connKey := map[int][2]string{}
	for _, r := range got {
		switch {
		case r.Type == flows.RecConn:
			k := pairKey(r.Summary.A.String(), r.Summary.B.String())
			conns[k] = r.Summary
			connKey[r.Conn] = k
		case r.Type == flows.RecFinding && r.Finding.Code == "tcp.gap":
			t.Errorf("frame %d: tcp.gap in a capture with no loss: %s", r.Frame, r.Finding.Msg)
		case r.Type == flows.RecFinding && r.Finding.Code == "cap.snaplen":
			snapFindings[r.Conn]++
		}
	}
	for id, n := range snapFindings {
		if n != 1 {
			t.Errorf("conn %d: %d cap.snaplen findings, want 1", id, n)
		}
	}
	mpas := map[uint64]*flows.MPARecord{}
	terms := map[uint64]rdmap.Terminate{}
	for _, r := range got {
		switch {
		case r.Type == flows.RecMPA:
			mpas[r.Frame] = r.MPA
		case r.Type == flows.RecFPDU && r.FPDU.SegOK && r.FPDU.Seg.Opcode == rdmap.OpTerminate:
			terms[r.Frame] = r.FPDU.Seg.Term
		}
	}
	for _, r := range full {
		switch r.Type {
		case flows.RecConn:
			w := r.Summary
			k := pairKey(w.A.String(), w.B.String())
			g := conns[k]
			if g == nil {
				t.Errorf("conn %s-%s (%s) is missing", w.A, w.B, w.State)
				continue
			}
			if header && (g.State != w.State || g.Rev != w.Rev || g.CRC != w.CRC || g.MarkersI2R != w.MarkersI2R ||
				g.MarkersR2I != w.MarkersR2I || g.Initiator != w.Initiator || g.Rejected != w.Rejected) {
				t.Errorf("conn %s-%s: got %s rev %d crc %v markers %v/%v initiator %s; want %s rev %d crc %v markers %v/%v initiator %s",
					w.A, w.B, g.State, g.Rev, g.CRC, g.MarkersI2R, g.MarkersR2I, g.Initiator,
					w.State, w.Rev, w.CRC, w.MarkersI2R, w.MarkersR2I, w.Initiator)
			}
			if g.TCP.Cut != cutSegs[k] {
				t.Errorf("conn %s-%s: %d segments cut, the capture has %d", w.A, w.B, g.TCP.Cut, cutSegs[k])
			}
			if id := -1; cutSegs[k] > 0 {
				for i, ck := range connKey {
					if ck == k {
						id = i
					}
				}
				if snapFindings[id] != 1 {
					t.Errorf("conn %s-%s: %d segments cut but no cap.snaplen", w.A, w.B, cutSegs[k])
				}
			}
		case flows.RecMPA:
			if !header {
				continue
			}
			g, w := mpas[r.Frame], r.MPA.Frame
			if g == nil {
				t.Errorf("frame %d: the MPA %v is missing", r.Frame, w.Kind)
				continue
			}
			if f := g.Frame; f.Kind != w.Kind || f.Rev != w.Rev || f.M != w.M || f.C != w.C || f.R != w.R || f.S != w.S ||
				f.PDLen != w.PDLen || !bytes.HasPrefix(w.PD, f.PD) {
				t.Errorf("frame %d: MPA %+v, want %+v", r.Frame, f, w)
			}
		case flows.RecFPDU:
			if !r.FPDU.SegOK || r.FPDU.Seg.Opcode != rdmap.OpTerminate {
				continue
			}
			g, ok := terms[r.Frame]
			w := r.FPDU.Seg.Term
			if !header && !ok {
				continue // framing may not have been found without the MPA header
			}
			if !ok || g.Layer != w.Layer || g.EType != w.EType || g.Code != w.Code || g.SiwLayout != w.SiwLayout {
				t.Errorf("frame %d: Terminate %+v (found %v), want %s", r.Frame, g, ok, w.Explain())
			}
		}
	}
}

// TestSnaplenMPAAsTshark compares the MPA Request and Reply fields of the
// cut captures with tshark's decode of the same files (tshark decodes the
// header of a cut frame too).
func TestSnaplenMPAAsTshark(t *testing.T) {
	testutil.RequireTshark(t)
	dir := t.TempDir()
	for _, path := range snapCaptures(t) {
		orig, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(filepath.Base(path), func(t *testing.T) {
			t.Parallel()
			snap := 96 // the TCP payload's first 30 octets in IPv4, 10 in IPv6
			cut := snapCut(t, orig, snap)
			file := filepath.Join(dir, strconv.Itoa(snap)+filepath.Base(path))
			if err := os.WriteFile(file, cut, 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command("tshark", "-r", file, "-Y", "iwarp_mpa.pdlength", "-T", "fields", "-e", "frame.number",
				"-e", "iwarp_mpa.rev", "-e", "iwarp_mpa.pdlength", "-e", "iwarp_mpa.marker_flag", "-e", "iwarp_mpa.crc_flag",
				"-e", "iwarp_mpa.rej_flag").Output()
			if err != nil {
				t.Fatalf("tshark %s: %v", file, err)
			}
			want := strings.TrimSpace(string(out))
			var b strings.Builder
			for _, r := range testutil.OfType(testutil.DecodeBytes(t, cut, flows.Options{}), flows.RecMPA) {
				f := r.MPA.Frame
				if b.Len() > 0 {
					b.WriteByte('\n')
				}
				b.WriteString(strconv.FormatUint(r.Frame, 10) + "\t" + strconv.Itoa(int(f.Rev)) + "\t" + strconv.Itoa(int(f.PDLen)) +
					"\t" + b01(f.M) + "\t" + b01(f.C) + "\t" + b01(f.R))
			}
			if b.String() != want {
				t.Errorf("%s cut to %d:\ngot\n%s\ntshark\n%s", filepath.Base(path), snap, b.String(), want)
			}
		})
	}
}
