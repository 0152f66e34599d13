package replay

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"slices"
	"testing"

	"github.com/iwarpkit/iwarpkit/dissect/mpa"
	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/internal/testutil"
)

func ptr[T any](v T) *T { return &v }

// checkFraming decodes a replayed capture and checks, with the decoder's
// connection summary and per-FPDU marker lists, that markers sit exactly in
// the directions wanted and that every marker and CRC checks.
func checkFraming(t *testing.T, path string, conn int, markersI2R, markersR2I, crc bool) *flows.ConnSummary {
	t.Helper()
	_, sums, recs := decoderMessages(t, path)
	sum := sums[conn]
	if sum == nil {
		t.Fatalf("no summary for conn %d", conn)
	}
	if sum.MarkersI2R != markersI2R || sum.MarkersR2I != markersR2I || sum.CRC != crc {
		t.Errorf("summary: markers i2r %v r2i %v CRC %v, want %v %v %v", sum.MarkersI2R, sum.MarkersR2I, sum.CRC, markersI2R, markersR2I, crc)
	}
	var withMarkers [3]int
	for _, r := range recs {
		if r.Conn != conn {
			continue
		}
		if r.Type == flows.RecFinding && r.Finding.Severity >= 2 {
			t.Errorf("finding: %s %s", r.Finding.Code, r.Finding.Msg)
		}
		if r.Type != flows.RecFPDU {
			continue
		}
		f := r.FPDU
		want := markersI2R
		if r.Dir == flows.DirR2I {
			want = markersR2I
		}
		if len(f.Markers) > 0 {
			withMarkers[r.Dir]++
			if !want {
				t.Errorf("frame %d (%s): %d markers in a direction without markers", r.Frame, r.Dir, len(f.Markers))
			}
		}
		for _, m := range f.Markers {
			if !m.OK {
				t.Errorf("frame %d: marker at seq %d has FPDUPTR %d, not OK", r.Frame, m.Seq, m.FPDUPtr)
			}
		}
		wantCRC := flows.CRCUnchecked
		if crc {
			wantCRC = flows.CRCOK
		}
		if f.CRCStatus != wantCRC {
			t.Errorf("frame %d: CRC status %s, want %s", r.Frame, f.CRCStatus, wantCRC)
		}
		for _, fd := range f.Findings {
			if fd.Severity >= 2 && fd.Code != "mpa.responder_first" {
				t.Errorf("frame %d: finding %s %s", r.Frame, fd.Code, fd.Msg)
			}
		}
	}
	if markersI2R && withMarkers[flows.DirI2R] == 0 {
		t.Errorf("no i2r FPDU holds a marker")
	}
	if markersR2I && withMarkers[flows.DirR2I] == 0 {
		t.Errorf("no r2i FPDU holds a marker")
	}
	return sum
}

// TestRenegotiate replays captures under another MPA negotiation: markers in
// one direction only, CRC switched, revisions changed, Rev 2 IRD/ORD and
// peer-to-peer with each RTR type. The decoder must see the new negotiation
// and the same messages.
func TestRenegotiate(t *testing.T) {
	siw := "../testdata/siw/crc_v2_iwtest_ops.pcap"
	tests := []struct {
		name, file string
		neg        Negotiation
		i2r, r2i   bool
		crc        bool
		rev        uint8
		p2p        bool
		rtr        mpa.RTRSet
		ird, ord   uint16 // the Reply's, as the decoder's summary shows them: the Request's swapped
	}{
		{name: "siw markers i2r only", file: siw, neg: Negotiation{MarkersI2R: ptr(true), MarkersR2I: ptr(false)}, i2r: true, crc: true, rev: 2, ird: 4, ord: 4},
		{name: "siw markers r2i only, no CRC", file: siw, neg: Negotiation{MarkersR2I: ptr(true), CRC: ptr(false)}, r2i: true, rev: 2, ird: 4, ord: 4},
		{name: "siw rev 1", file: siw, neg: Negotiation{Rev: ptr[uint8](1)}, crc: true, rev: 1},
		{name: "siw rev 0 markers both", file: siw, neg: Negotiation{Rev: ptr[uint8](0), MarkersI2R: ptr(true), MarkersR2I: ptr(true)}, i2r: true, r2i: true, crc: true, rev: 0},
		{name: "siw rev 0", file: siw, neg: Negotiation{Rev: ptr[uint8](0)}, i2r: true, r2i: true, crc: true, rev: 0},
		{name: "synth rev2 to rev1 markers both", file: "rev2-enhanced", neg: Negotiation{Rev: ptr[uint8](1), MarkersI2R: ptr(true), MarkersR2I: ptr(true)}, i2r: true, r2i: true, crc: true, rev: 1},
		{name: "synth rev1 to rev2 IRD/ORD", file: "rev1-crc", neg: Negotiation{Rev: ptr[uint8](2), IRD: ptr[uint16](8), ORD: ptr[uint16](2)}, crc: true, rev: 2, ird: 2, ord: 8},
		{name: "synth rev1 to rev2 p2p write", file: "rev1-crc", neg: Negotiation{Rev: ptr[uint8](2), P2P: ptr(true), RTR: ptr(mpa.RTRWrite)}, crc: true, rev: 2, p2p: true, rtr: mpa.RTRWrite, ird: 1, ord: 1},
		{name: "synth rev1 to rev2 p2p read", file: "rev1-crc", neg: Negotiation{Rev: ptr[uint8](2), P2P: ptr(true), RTR: ptr(mpa.RTRRead)}, crc: true, rev: 2, p2p: true, rtr: mpa.RTRRead, ird: 1, ord: 1},
		{name: "synth rev1 to rev2 p2p send", file: "rev1-crc", neg: Negotiation{Rev: ptr[uint8](2), P2P: ptr(true), RTR: ptr(mpa.RTRSend)}, crc: true, rev: 2, p2p: true, rtr: mpa.RTRSend, ird: 1, ord: 1},
		{name: "siw p2p write rtr to read rtr", file: "../testdata/siw/p2p_rtr1_rping.pcap", neg: Negotiation{RTR: ptr(mpa.RTRRead)}, rev: 2, p2p: true, rtr: mpa.RTRRead, ird: 1, ord: 1},
		{name: "siw p2p off", file: "../testdata/siw/p2p_rtr1_rping.pcap", neg: Negotiation{P2P: ptr(false)}, rev: 2, ird: 1, ord: 1},
		{name: "synth rdmac stream markers off", file: "rdmac", neg: Negotiation{MarkersI2R: ptr(false), MarkersR2I: ptr(false)}, crc: true, rev: 255},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := tc.file
			if path[0] != '.' {
				path = synthFile(t, path)
			}
			orig := load(t, path, LoadOptions{})
			out, rep := toPcap(t, orig, Options{Negotiation: tc.neg})
			if !rep.OK() {
				t.Fatalf("replay not clean: %+v", rep.Conns[0])
			}
			o := rep.Conns[0].Outcome
			if o.MarkersI2R != tc.i2r || o.MarkersR2I != tc.r2i || o.CRC != tc.crc || o.P2P != tc.p2p || o.RTR != tc.rtr {
				t.Errorf("outcome %s, want markers %v/%v CRC %v P2P %v RTR %s", o, tc.i2r, tc.r2i, tc.crc, tc.p2p, tc.rtr)
			}
			sum := checkFraming(t, out, 0, tc.i2r, tc.r2i, tc.crc)
			if tc.rev != 255 && sum.Rev != tc.rev {
				t.Errorf("rev %d, want %d", sum.Rev, tc.rev)
			}
			if sum.P2P != tc.p2p || sum.RTR != tc.rtr {
				t.Errorf("decoded P2P %v RTR %s, want %v %s", sum.P2P, sum.RTR, tc.p2p, tc.rtr)
			}
			if tc.rev == 2 && (sum.IRD != tc.ird || sum.ORD != tc.ord) {
				t.Errorf("decoded IRD %d ORD %d, want %d %d", sum.IRD, sum.ORD, tc.ird, tc.ord)
			}
			again := load(t, out, LoadOptions{})
			a, b := infos(orig[0], true), infos(again[0], true)
			for d := range a {
				if !slices.Equal(a[d], b[d]) {
					t.Errorf("%s: messages differ\n recorded %v\n replayed %v", Dir(d), a[d], b[d])
				}
			}
			if tc.p2p {
				first := again[0].Messages[0]
				if !first.RTR || first.Dir != I2R || first.Length != 0 {
					t.Errorf("first replayed message is %s %s len %d, want the RTR", first.Dir, first.Head.Opcode, first.Length)
				}
			}
		})
	}
}

// TestNegotiationCheck: revision 0 cannot be asked for with markers or CRC
// off (RDMAC RNICs always use both, seed 000 Figure 1); the replay
// functions refuse it before sending anything.
func TestNegotiationCheck(t *testing.T) {
	f := false
	for _, c := range []struct {
		n  Negotiation
		ok bool
	}{
		{Negotiation{Rev: ptr[uint8](0)}, true},
		{Negotiation{Rev: ptr[uint8](0), MarkersI2R: ptr(true), MarkersR2I: ptr(true), CRC: ptr(true)}, true},
		{Negotiation{Rev: ptr[uint8](1), MarkersI2R: &f, CRC: &f}, true},
		{Negotiation{MarkersR2I: &f}, true},
		{Negotiation{Rev: ptr[uint8](0), MarkersI2R: &f}, false},
		{Negotiation{Rev: ptr[uint8](0), MarkersR2I: &f}, false},
		{Negotiation{Rev: ptr[uint8](0), CRC: &f}, false},
	} {
		err := c.n.Check()
		if (err == nil) != c.ok || err != nil && !errors.Is(err, ErrNegotiation) {
			t.Errorf("%+v: %v", c.n, err)
		}
	}
	ss := load(t, "../testdata/siw/crc_v2_rping.pcap", LoadOptions{})
	if _, err := WritePcap(context.Background(), io.Discard, ss, Options{Negotiation: Negotiation{Rev: ptr[uint8](0), CRC: &f}}); !errors.Is(err, ErrNegotiation) {
		t.Errorf("WritePcap: %v", err)
	}
}

// rawFrame finds the MPA frame with key in a capture file's octets (each
// frame sits whole in one packet of these captures) and returns its octets:
// the key, the flags octet, Rev, PD_Length and the private data (RFC 5044
// §7.1.1), read without the decoder.
func rawFrame(t *testing.T, path string, key []byte) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(b, key)
	if i < 0 || i+20 > len(b) {
		return nil
	}
	n := 20 + int(binary.BigEndian.Uint16(b[i+18:]))
	return b[i : i+n]
}

// TestFramesAsRecorded replays captures without overrides and checks that
// the MPA Request and Reply go out octet for octet as captured: flags
// (the S bit of a Rev 3 Request included), revision and private data.
func TestFramesAsRecorded(t *testing.T) {
	for _, name := range []string{"no-reply", "rev1-crc", "rev2-enhanced", "rev2-p2p-read-rtr", "reject"} {
		t.Run(name, func(t *testing.T) {
			in := "../testdata/synth/" + name + ".pcap"
			out, _ := toPcap(t, load(t, in, LoadOptions{}), Options{})
			for _, key := range [][]byte{mpa.KeyRequest[:], mpa.KeyReply[:]} {
				want, got := rawFrame(t, in, key), rawFrame(t, out, key)
				if !bytes.Equal(got, want) {
					t.Errorf("%s frame replayed as\n% x\nrecorded\n% x", key[7:10], got, want)
				}
			}
		})
	}
	// The Rev 3 Request keeps S (octet 16, 0x10: PROTOCOL.md B).
	if f := rawFrame(t, "../testdata/synth/no-reply.pcap", mpa.KeyRequest[:]); f == nil || f[16]&0x10 == 0 || f[17] != 3 {
		t.Errorf("no-reply.pcap's Request is not the Rev 3 S=1 frame this test is about: % x", f)
	}
}

// TestResegmentToMULPDU: markers turned on by the replay for a direction the
// recording had none in (siw's FPDUs fill 1448-octet segments without
// markers) cut its segments to MULPDU (RFC 5044 §8; PROTOCOL.md A.3): for
// the 1448-octet segments WritePcap writes, no FPDU is longer than 1448
// octets on the wire nor spans two TCP segments, and the messages are the
// recorded ones. The direction without markers keeps the recorded
// segments.
func TestResegmentToMULPDU(t *testing.T) {
	orig := load(t, "../testdata/siw/crc_v2_iwtest_ops.pcap", LoadOptions{})
	if orig[0].MarkersI2R || orig[0].MarkersR2I {
		t.Fatal("the recording has markers")
	}
	out, rep := toPcap(t, orig, Options{Negotiation: Negotiation{MarkersI2R: ptr(true), MarkersR2I: ptr(false)}})
	if !rep.OK() {
		t.Fatalf("replay not clean: %+v", rep.Conns[0])
	}
	checkFraming(t, out, 0, true, false, true)
	var big [3]int
	for _, r := range testutil.Decode(t, out, flows.Options{}) {
		if r.Type != flows.RecFPDU {
			continue
		}
		f := r.FPDU
		if r.Dir == flows.DirI2R && (len(f.Frames) != 1 || f.Len > 1448) {
			t.Errorf("frame %d: i2r FPDU of %d octets in frames %v", r.Frame, f.Len, f.Frames)
		}
		if f.Len > 1400 {
			big[r.Dir]++
		}
	}
	if big[flows.DirI2R] == 0 || big[flows.DirR2I] == 0 {
		t.Errorf("FPDUs over 1400 octets: i2r %d, r2i %d; want some each way (full segments)", big[flows.DirI2R], big[flows.DirR2I])
	}
	again := load(t, out, LoadOptions{})
	a, b := infos(orig[0], true), infos(again[0], true)
	for d := range a {
		if !slices.Equal(a[d], b[d]) {
			t.Errorf("%s: messages differ\n recorded %v\n replayed %v", Dir(d), a[d], b[d])
		}
	}
}
