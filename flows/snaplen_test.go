package flows_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/iwarpkit/iwarpkit/capture"
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
				checkSnapReads(t, full, got, payload)
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

// checkSnapReads checks the RDMA Read Requests of a capture cut to keep
// payload octets of each segment against the whole capture's decode (siw
// sends each Read Request at the start of a segment): from the Data Sink
// STag on (MPA 2 + DDP 18 + 4 octets), every one is decoded, with the
// fields its captured octets hold whole equal to the whole decode's, and
// the Read Responses are matched to the same requests with the same
// latency.
func checkSnapReads(t *testing.T, full, got []*flows.Record, payload int) {
	t.Helper()
	have := payload - 20 // octets of the Read Request header captured
	reqs := map[uint64]*flows.FPDURecord{}
	resps := map[uint64]*flows.MessageRecord{}
	for _, r := range got {
		switch {
		case r.Type == flows.RecFPDU && r.FPDU.SegOK && r.FPDU.Seg.Opcode == rdmap.OpReadRequest:
			reqs[r.Frame] = r.FPDU
		case r.Type == flows.RecMessage && r.Message.Opcode == rdmap.OpReadResponse:
			resps[r.Frame] = r.Message
		}
	}
	n := 0
	for _, r := range full {
		switch {
		case r.Type == flows.RecFPDU && r.FPDU.SegOK && r.FPDU.Seg.Opcode == rdmap.OpReadRequest:
			g := reqs[r.Frame]
			if have < 4 {
				if g != nil {
					t.Errorf("frame %d: Read Request decoded from %d octets of its header", r.Frame, have)
				}
				continue
			}
			n++
			w := r.FPDU.Seg
			if g == nil {
				t.Errorf("frame %d: Read Request %+v not decoded from %d octets of its header", r.Frame, w.Read, have)
				continue
			}
			wantCut := have
			if have >= rdmap.ReadRequestLen {
				wantCut = 0
			}
			want := rdmap.ReadRequest{}
			sinkSTag, sinkTO, size, srcSTag, srcTO := rdmap.ReadRequestKnown(wantCut)
			if sinkSTag {
				want.SinkSTag = w.Read.SinkSTag
			}
			if sinkTO {
				want.SinkTO = w.Read.SinkTO
			}
			if size {
				want.Size = w.Read.Size
			}
			if srcSTag {
				want.SrcSTag = w.Read.SrcSTag
			}
			if srcTO {
				want.SrcTO = w.Read.SrcTO
			}
			if g.Seg.Read != want || g.Seg.HdrCut != wantCut || g.Seg.DDP != w.DDP {
				t.Errorf("frame %d: Read Request %+v (HdrCut %d), want %+v (%d)", r.Frame, g.Seg.Read, g.Seg.HdrCut, want, wantCut)
			}
		case r.Type == flows.RecMessage && r.Message.Opcode == rdmap.OpReadResponse && r.Message.RequestFrame != 0 && have >= 4:
			g := resps[r.Frame]
			if g == nil {
				continue // its segments' headers may be what the capture cut
			}
			if g.RequestFrame != r.Message.RequestFrame || g.Latency != r.Message.Latency {
				t.Errorf("frame %d: Read Response of the request of frame %d (latency %v), want %d (%v)",
					r.Frame, g.RequestFrame, g.Latency, r.Message.RequestFrame, r.Message.Latency)
			}
		}
	}
	if n > 0 {
		t.Logf("%d Read Requests from %d octets of their header", n, have)
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

// TestSnaplenReadUnanswered: a Read Request whose size the capture cut,
// left unanswered when the capture ends, is reported as the whole one is,
// at the same frame and sink STag, without a size it does not have.
func TestSnaplenReadUnanswered(t *testing.T) {
	orig, err := os.ReadFile("../testdata/siw/crc_v2_iwtest_ops.pcap")
	if err != nil {
		t.Fatal(err)
	}
	// The first 16 records: the capture ends on the first Read Request.
	first := func(b []byte, n int) []byte {
		off := 24
		for i := 0; i < n; i++ {
			off += 16 + int(binary.LittleEndian.Uint32(b[off+8:]))
		}
		return b[:off]
	}
	unanswered := func(recs []*flows.Record) *flows.Record {
		for _, r := range recs {
			if r.Type == flows.RecFinding && r.Finding.Code == "rdmap.read_unanswered" {
				return r
			}
		}
		return nil
	}
	whole := unanswered(testutil.DecodeBytes(t, first(orig, 16), flows.Options{}))
	cut := unanswered(testutil.DecodeBytes(t, first(snapCut(t, orig, 90), 16), flows.Options{}))
	if whole == nil || cut == nil {
		t.Fatalf("rdmap.read_unanswered: whole %v, cut %v", whole, cut)
	}
	t.Logf("whole: %s\ncut: %s", whole.Finding.Msg, cut.Finding.Msg)
	if !strings.Contains(whole.Finding.Msg, "asked for 2000 octets into sink STag 0x89b53f00") {
		t.Errorf("whole: %s", whole.Finding.Msg)
	}
	if !strings.Contains(cut.Finding.Msg, "frame 16 ") || !strings.Contains(cut.Finding.Msg, "sink STag 0x89b53f00") ||
		!strings.Contains(cut.Finding.Msg, "unknown size") || strings.Contains(cut.Finding.Msg, "asked for 0 octets") {
		t.Errorf("cut: %s", cut.Finding.Msg)
	}
	if cut.Finding.Severity != whole.Finding.Severity || cut.Frame != whole.Frame {
		t.Errorf("cut: %v at frame %d, whole: %v at frame %d", cut.Finding.Severity, cut.Frame, whole.Finding.Severity, whole.Frame)
	}
}

// TestSnaplenRFC7306 cuts the synth capture of Immediate Data and Atomic
// operations (RFC 7306) at every length of TCP payload from 8 to 90 octets
// and checks each Immediate Data, Atomic Request and Atomic Response
// against the whole capture's decode (tied to synth's ground truth by
// TestSynthTruth): from the first 4 octets of its RDMAP header on (MPA 2 +
// DDP 18 + 4), every one is decoded, HdrCut saying how many octets of its
// header there were and the fields they hold whole equal to the whole
// decode's, the others zero; and each is still a message.
func TestSnaplenRFC7306(t *testing.T) {
	orig, err := os.ReadFile("../testdata/synth/rfc7306.pcap")
	if err != nil {
		t.Fatal(err)
	}
	full := testutil.DecodeBytes(t, orig, flows.Options{})
	hdr := 0
	for _, p := range testutil.ReadPackets(orig) {
		if len(p.Payload) > 0 {
			hdr = p.CapLen - len(p.Payload)
			break
		}
	}
	cutOps := func(recs []*flows.Record) (map[uint64]*flows.FPDURecord, int) {
		segs := map[uint64]*flows.FPDURecord{}
		msgs := 0
		for _, r := range recs {
			switch {
			case r.Type == flows.RecFPDU && r.FPDU.SegOK && cutLen(r.FPDU.Seg.Opcode) > 0:
				segs[r.Frame] = r.FPDU
			case r.Type == flows.RecMessage:
				msgs++
			}
		}
		return segs, msgs
	}
	want, wantMsgs := cutOps(full)
	if len(want) < 6 {
		t.Fatalf("the whole capture has %d Immediate Data and Atomic segments, want 6 or more", len(want))
	}
	for payload := 8; payload <= 90; payload++ {
		have := payload - 20 // octets of the RDMAP header captured
		got, msgs := cutOps(testutil.DecodeBytes(t, snapCut(t, orig, hdr+payload), flows.Options{}))
		for frame, w := range want {
			m := cutLen(w.Seg.Opcode)
			g := got[frame]
			if have < 4 {
				if g != nil {
					t.Errorf("payload %d: frame %d: %v decoded from %d octets of its header", payload, frame, w.Seg.Opcode, have)
				}
				continue
			}
			if g == nil {
				t.Errorf("payload %d: frame %d: %v not decoded from %d octets of its header", payload, frame, w.Seg.Opcode, have)
				continue
			}
			wantCut := have
			if have >= m {
				wantCut = 0
			}
			ws := w.Seg
			ws.Payload = nil
			if wantCut > 0 {
				ws.Immediate, ws.HdrLen, ws.HdrCut = 0, g.Seg.HdrLen, wantCut
				ws.AtomicReq, ws.AtomicResp = knownAtomicReq(w.Seg.AtomicReq, have), knownAtomicResp(w.Seg.AtomicResp, have)
			}
			gs := g.Seg
			gs.Payload = nil
			if !reflect.DeepEqual(gs, ws) {
				t.Errorf("payload %d: frame %d: %+v, want %+v", payload, frame, gs, ws)
			}
		}
		if have >= 4 && msgs != wantMsgs {
			t.Errorf("payload %d: %d messages, the whole capture has %d", payload, msgs, wantMsgs)
		}
	}
}

// cutLen is the length of the RFC 7306 header of op, 0 for other opcodes.
func cutLen(op rdmap.Opcode) int {
	switch op {
	case rdmap.OpImmediate, rdmap.OpImmediateSE:
		return rdmap.ImmediateDataLen
	case rdmap.OpAtomicRequest:
		return rdmap.AtomicRequestLen
	case rdmap.OpAtomicResponse:
		return rdmap.AtomicResponseLen
	}
	return 0
}

// knownAtomicReq is r with the fields the first have octets of its header
// do not hold whole zeroed, field by field from RFC 7306 §6.1's layout.
func knownAtomicReq(r rdmap.AtomicRequest, have int) rdmap.AtomicRequest {
	var k rdmap.AtomicRequest
	if have >= 4 {
		k.Rsvd, k.Op = r.Rsvd, r.Op
	}
	if have >= 8 {
		k.ReqID = r.ReqID
	}
	if have >= 12 {
		k.RemoteSTag = r.RemoteSTag
	}
	if have >= 20 {
		k.RemoteTO = r.RemoteTO
	}
	if have >= 28 {
		k.AddSwapData = r.AddSwapData
	}
	if have >= 36 {
		k.AddSwapMask = r.AddSwapMask
	}
	if have >= 44 {
		k.CompareData = r.CompareData
	}
	return k
}

// knownAtomicResp is knownAtomicReq for an Atomic Response (§6.2).
func knownAtomicResp(r rdmap.AtomicResponse, have int) rdmap.AtomicResponse {
	var k rdmap.AtomicResponse
	if have >= 4 {
		k.ReqID = r.ReqID
	}
	return k
}

// TestSnaplenHidden cuts every real siw capture before 8 octets of TCP
// payload (6 octets into the TCP options, at the end of the headers, and 4
// octets into the payload): no connection can be told iWARP, so every
// iWARP connection of the whole capture's decode is counted by
// SnapHidden, with one Decoder and with two workers reading the file in
// chunks, and the cut decode's only conn records are of connections whose
// handshake failed, which need no payload. Kept 8 octets, the key's first
// half, the connections are iWARP again and none is hidden.
func TestSnaplenHidden(t *testing.T) {
	for _, path := range snapCaptures(t) {
		orig, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		full := testutil.DecodeBytes(t, orig, flows.Options{})
		var conns, failed int
		for _, r := range full {
			if r.Type == flows.RecConn {
				conns++
				if st := r.Summary.State; st == "refused" || st == "unanswered" {
					failed++
				}
			}
		}
		hdr := 0
		for _, p := range testutil.ReadPackets(orig) {
			if len(p.Payload) > 0 {
				hdr = p.CapLen - len(p.Payload)
				break
			}
		}
		for _, payload := range []int{-6, 0, 4, 8} {
			snap := hdr + payload
			t.Run(filepath.Base(path)+"/"+strconv.Itoa(snap), func(t *testing.T) {
				cut := snapCut(t, orig, snap)
				var got []*flows.Record
				d := flows.NewDecoder(flows.Options{}, func(r *flows.Record) { got = append(got, r) })
				for _, p := range testutil.ReadPackets(cut) {
					d.Packet(&p)
				}
				d.Close()
				cutConns := len(testutil.OfType(got, flows.RecConn))
				want := conns - cutConns
				if payload >= 8 {
					want = 0
				}
				if d.SnapHidden() != want || (payload < 8 && cutConns != failed) {
					t.Fatalf("%d connections hidden, %d conn records; the whole capture has %d (%d of failed handshakes)",
						d.SnapHidden(), cutConns, conns, failed)
				}
				file := filepath.Join(t.TempDir(), "cut.pcap")
				if err := os.WriteFile(file, cut, 0o644); err != nil {
					t.Fatal(err)
				}
				cr, err := capture.OpenChunks(file, 0)
				if err != nil {
					t.Fatal(err)
				}
				defer cr.Close()
				par, err := flows.NewParallel(flows.Options{}, 2, func(*flows.Record) {})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := par.DecodeChunks(context.Background(), cr); err != nil {
					t.Fatal(err)
				}
				if par.SnapHidden() != d.SnapHidden() {
					t.Fatalf("two workers: %d hidden, one Decoder %d", par.SnapHidden(), d.SnapHidden())
				}
			})
		}
	}
}
