package synth

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math/bits"
	"net/netip"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// gen generates s into memory.
func gen(t testing.TB, s Scenario) (pcap, truth []byte) {
	t.Helper()
	var p, tr bytes.Buffer
	if _, err := Generate(s, &p, &tr); err != nil {
		t.Fatalf("%s: %v", s.Name, err)
	}
	return p.Bytes(), tr.Bytes()
}

func mustNamed(t testing.TB, name string, seed int64) Scenario {
	t.Helper()
	s, ok := Named(name, seed)
	if !ok {
		t.Fatalf("no scenario %q", name)
	}
	return s
}

func TestNamesUniqueAndDescribed(t *testing.T) {
	seen := map[string]bool{}
	for _, n := range Names() {
		if seen[n] {
			t.Errorf("duplicate name %q", n)
		}
		seen[n] = true
		if Describe(n) == "" {
			t.Errorf("%q has no description", n)
		}
	}
	if _, ok := Named("no-such-scenario", 1); ok {
		t.Error("Named accepted an unknown name")
	}
}

// TestDeterministic: the same scenario and seed give the same octets; a
// different seed changes them.
func TestDeterministic(t *testing.T) {
	for _, n := range Names() {
		p1, t1 := gen(t, mustNamed(t, n, 7))
		p2, t2 := gen(t, mustNamed(t, n, 7))
		if !bytes.Equal(p1, p2) || !bytes.Equal(t1, t2) {
			t.Errorf("%s: two runs with seed 7 differ", n)
		}
		p3, _ := gen(t, mustNamed(t, n, 8))
		if bytes.Equal(p1, p3) {
			t.Errorf("%s: seeds 7 and 8 give the same pcap", n)
		}
	}
}

// TestTruthConsistent runs the independent checker on every named
// scenario with several seeds, then checks the layout each one promises.
func TestTruthConsistent(t *testing.T) {
	for _, n := range Names() {
		for _, seed := range []int64{1, 2, 3} {
			t.Run(n+"/"+strconv.FormatInt(seed, 10), func(t *testing.T) {
				p, tr := gen(t, mustNamed(t, n, seed))
				c, tf, st := checkCapture(t, p, tr)
				claim, ok := claims[n]
				if !ok {
					t.Fatalf("no claim check for %q", n)
				}
				claim(t, &checked{c, tf, st})
			})
		}
	}
}

// checked bundles what checkCapture returns.
type checked struct {
	c  *capture
	tf *truthFile
	st map[dirKey]*stream
}

// fpdus returns the FPDUs of conn 0 in direction dir, in stream order.
func (k *checked) fpdus(dir string) []*TruthFPDU {
	var out []*TruthFPDU
	for _, f := range k.tf.fpdu {
		if f.Conn == 0 && f.Dir == dir {
			out = append(out, f)
		}
	}
	slices.SortFunc(out, func(a, b *TruthFPDU) int { return int(a.Off) - int(b.Off) })
	return out
}

func (k *checked) all() []*TruthFPDU { return append(k.fpdus("i2r"), k.fpdus("r2i")...) }

// origin returns the marker grid origin of conn 0 in dir as a stream offset.
func (k *checked) origin(t *testing.T, dir string) uint64 {
	cr := k.tf.conns[0]
	o := cr.OriginI2R
	if dir == "r2i" {
		o = cr.OriginR2I
	}
	if o == nil {
		t.Fatalf("no marker origin %s", dir)
	}
	return k.st[dirKey{0, dir}].off(*o)
}

func (k *checked) opcodes() map[uint8]int {
	m := map[uint8]int{}
	for _, f := range k.tf.fpdu {
		if f.RDMAP != nil {
			m[f.RDMAP.Opcode]++
		}
	}
	return m
}

func expect(t *testing.T, ok bool, format string, args ...any) {
	t.Helper()
	if !ok {
		t.Errorf(format, args...)
	}
}

func allCRC(t *testing.T, k *checked, status string) {
	t.Helper()
	for _, f := range k.tf.fpdu {
		if f.MPA.CRCStatus != status {
			t.Errorf("fpdu at %d: crc_status %q, want %q", f.Off, f.MPA.CRCStatus, status)
		}
	}
}

func hasMarkers(fs []*TruthFPDU) bool {
	for _, f := range fs {
		if len(f.MPA.Markers) > 0 {
			return true
		}
	}
	return false
}

// impairedBasic checks a connection built from basicOps.
func impairedBasic(t *testing.T, k *checked) {
	expect(t, len(k.tf.fpdu) >= 12, "only %d FPDUs", len(k.tf.fpdu))
}

var claims = map[string]func(*testing.T, *checked){
	"rev1-crc": func(t *testing.T, k *checked) {
		allCRC(t, k, "ok")
		cr := k.tf.conns[0]
		expect(t, cr.MPA.Rev == 1 && !cr.MPA.MarkersI2R && !cr.MPA.MarkersR2I && cr.MPA.CRC, "conn %+v", cr.MPA)
		ops := k.opcodes()
		for _, op := range []uint8{0, 1, 2, 3, 4, 5, 6} {
			expect(t, ops[op] > 0, "no opcode %d", op)
		}
		zero := false
		for _, f := range k.tf.fpdu {
			zero = zero || (f.RDMAP.Opcode == 3 && f.PayloadLen == 0)
		}
		expect(t, zero, "no zero-length Send")
	},
	"rev1-nocrc": func(t *testing.T, k *checked) {
		allCRC(t, k, "unchecked")
		perFrame := map[uint64]int{}
		for _, f := range k.tf.fpdu {
			expect(t, f.MPA.CRC == 0, "CRC field %#x with CRC off", f.MPA.CRC)
			expect(t, len(f.Frames) == 1, "FPDU at %d in frames %v", f.Off, f.Frames)
			perFrame[f.Frames[0]]++
		}
		for fr, n := range perFrame {
			expect(t, n == 1, "frame %d holds %d FPDUs", fr, n)
		}
	},
	"rev2-enhanced": func(t *testing.T, k *checked) {
		allCRC(t, k, "ok")
		for _, m := range k.tf.mpa {
			expect(t, m.Rev == 2 && m.S && m.Enhanced != nil && m.Enhanced.IRD == 4 && m.Enhanced.ORD == 4, "mpa %+v", m)
			expect(t, strings.Contains(m.PD, "6977746573742d"), "pd %s lacks iwtest-", m.PD)
		}
	},
	"rev2-p2p-write-rtr": func(t *testing.T, k *checked) {
		f := k.fpdus("i2r")[0]
		expect(t, f.RDMAP.Opcode == 0 && f.PayloadLen == 0 && *f.DDP.STag == 1 && *f.DDP.TO == 0 && f.DDP.L, "RTR %+v %+v", f.DDP, f.RDMAP)
		cr := k.tf.conns[0]
		expect(t, cr.MPA.P2P && slices.Equal(cr.MPA.RTR, []string{"write"}), "conn %+v", cr.MPA)
	},
	"rev2-p2p-read-rtr": func(t *testing.T, k *checked) {
		f := k.fpdus("i2r")[0]
		expect(t, f.RDMAP.Opcode == 1 && f.RDMAP.Read.Size == 0 && f.RDMAP.Read.SrcSTag == 1, "RTR %+v", f.RDMAP)
		r := k.fpdus("r2i")[0]
		expect(t, r.RDMAP.Opcode == 2 && r.PayloadLen == 0 && r.DDP.L, "RTR response %+v %+v", r.DDP, r.RDMAP)
		cr := k.tf.conns[0]
		expect(t, cr.MPA.P2P && slices.Equal(cr.MPA.RTR, []string{"read"}), "conn %+v", cr.MPA)
	},
	"rdmac": func(t *testing.T, k *checked) {
		allCRC(t, k, "ok")
		cr := k.tf.conns[0]
		expect(t, len(k.tf.mpa) == 0 && cr.RDMAC && cr.DDPVersion == 0 && cr.RDMAPVersion == 0, "conn %+v", cr)
		expect(t, cr.MPA.MarkersI2R && cr.MPA.MarkersR2I && cr.MPA.CRC, "conn mpa %+v", cr.MPA)
		for _, d := range []string{"i2r", "r2i"} {
			f := k.fpdus(d)[0]
			expect(t, f.Off == 0 && len(f.MPA.Markers) > 0 && f.MPA.Markers[0].Off == 0 && f.MPA.Markers[0].FPDUPtr == 0, "first %s FPDU %+v", d, f.MPA)
		}
	},
	"rev0-interop": func(t *testing.T, k *checked) {
		cr := k.tf.conns[0]
		expect(t, cr.DDPVersion == 0 && cr.MPA.MarkersI2R && cr.MPA.MarkersR2I && cr.MPA.Rev == 0, "conn %+v", cr)
		expect(t, hasMarkers(k.fpdus("i2r")) && hasMarkers(k.fpdus("r2i")), "markers missing")
	},
	"markers-both": func(t *testing.T, k *checked) {
		expect(t, hasMarkers(k.fpdus("i2r")) && hasMarkers(k.fpdus("r2i")), "markers missing")
	},
	"markers-i2r": func(t *testing.T, k *checked) {
		expect(t, hasMarkers(k.fpdus("i2r")) && !hasMarkers(k.fpdus("r2i")), "markers not i2r only")
		cr := k.tf.conns[0]
		expect(t, cr.MPA.MarkersI2R && !cr.MPA.MarkersR2I, "conn %+v", cr.MPA)
	},
	"markers-r2i": func(t *testing.T, k *checked) {
		expect(t, !hasMarkers(k.fpdus("i2r")) && hasMarkers(k.fpdus("r2i")), "markers not r2i only")
	},
	"marker-grid-end": func(t *testing.T, k *checked) {
		o := k.origin(t, "i2r")
		fs := k.fpdus("i2r")
		onGrid, offGridStart, multi := 0, 0, false
		for i, f := range fs {
			multi = multi || len(f.MPA.Markers) >= 2
			end := f.Off + uint64(f.Len)
			if (end-o)%512 != 0 {
				continue
			}
			onGrid++
			if (f.Off-o)%512 != 0 {
				offGridStart++
			}
			if i+1 < len(fs) {
				n := fs[i+1]
				expect(t, len(n.MPA.Markers) > 0 && n.MPA.Markers[0].Off == n.Off && n.MPA.Markers[0].FPDUPtr == 0, "FPDU after grid end has no leading marker: %+v", n.MPA)
			}
		}
		expect(t, onGrid >= 3 && offGridStart >= 1 && multi, "on grid %d, not starting on it %d, multi %v", onGrid, offGridStart, multi)
	},
	"marker-multi": func(t *testing.T, k *checked) {
		for _, d := range []string{"i2r", "r2i"} {
			n := 0
			for _, f := range k.fpdus(d) {
				n = max(n, len(f.MPA.Markers))
			}
			expect(t, n >= 3, "%s: at most %d markers in an FPDU", d, n)
		}
	},
	"marker-pad-crc": func(t *testing.T, k *checked) {
		found := false
		for _, f := range k.fpdus("i2r") {
			for _, m := range f.MPA.Markers {
				if m.Off+4 == f.Off+uint64(f.Len)-4 && f.MPA.Pad > 0 && f.MPA.CRCStatus == "ok" {
					found = true
				}
			}
		}
		expect(t, found, "no marker between PAD and CRC")
	},
	"marker-split-len": func(t *testing.T, k *checked) {
		for _, d := range []string{"i2r", "r2i"} {
			found := false
			for _, f := range k.fpdus(d) {
				for _, m := range f.MPA.Markers {
					found = found || m.Off == f.Off+1
				}
			}
			expect(t, found, "%s: no marker inside ULPDU_Length", d)
		}
		allCRC(t, k, "ok")
	},
	"tiny-segments": func(t *testing.T, k *checked) {
		st := k.st[dirKey{0, "i2r"}]
		inside, cutMarker := false, false
		for _, sp := range st.spans {
			for _, f := range k.fpdus("i2r") {
				if sp.n < 8 && sp.off > f.Off && sp.off+uint64(sp.n) < f.Off+uint64(f.Len) {
					inside = true
				}
				for _, m := range f.MPA.Markers {
					if sp.off > m.Off && sp.off < m.Off+4 {
						cutMarker = true
					}
				}
			}
		}
		expect(t, inside && cutMarker, "sliver inside an FPDU %v, marker cut by a segment %v", inside, cutMarker)
	},
	"mss-span": func(t *testing.T, k *checked) {
		spans, shared := false, false
		whole := map[uint64]int{}
		for _, f := range k.tf.fpdu {
			spans = spans || len(f.Frames) >= 3
			if len(f.Frames) == 1 {
				whole[f.Frames[0]]++
			}
		}
		for _, n := range whole {
			shared = shared || n >= 2
		}
		expect(t, spans && shared, "FPDU over 3+ segments %v, segment with 2+ FPDUs %v", spans, shared)
	},
	"ipv6": func(t *testing.T, k *checked) {
		a, err := netip.ParseAddrPort(k.tf.conns[0].Initiator)
		expect(t, err == nil && a.Addr().Is6(), "initiator %s", k.tf.conns[0].Initiator)
		allCRC(t, k, "ok")
	},
	"retransmit-dup": func(t *testing.T, k *checked) {
		impairedBasic(t, k)
		dup := 0
		for i, p := range k.c.pkts {
			for _, q := range k.c.pkts[:i] {
				if len(p.payload) > 0 && p.src == q.src && p.seq == q.seq && bytes.Equal(p.payload, q.payload) {
					dup++
				}
			}
		}
		expect(t, dup == 2, "%d identical retransmissions", dup)
		allCRC(t, k, "ok")
	},
	"retransmit-conflict": func(t *testing.T, k *checked) {
		impairedBasic(t, k)
		conflict := 0
		for i, p := range k.c.pkts {
			for _, q := range k.c.pkts[:i] {
				if len(p.payload) > 0 && p.src == q.src && p.seq == q.seq && len(p.payload) == len(q.payload) && !bytes.Equal(p.payload, q.payload) {
					conflict++
				}
			}
		}
		expect(t, conflict == 2, "%d conflicting retransmissions", conflict)
		allCRC(t, k, "ok")
	},
	"reorder": func(t *testing.T, k *checked) {
		impairedBasic(t, k)
		back := 0
		for _, st := range k.st {
			var hi uint64
			for _, sp := range st.spans {
				if sp.off < hi {
					back++
				}
				hi = max(hi, sp.off+uint64(sp.n))
			}
		}
		expect(t, back == 2, "%d segments arrive behind a later one", back)
		allCRC(t, k, "ok")
	},
	"gap": func(t *testing.T, k *checked) {
		dirs := map[string]bool{}
		for _, g := range k.tf.gaps {
			expect(t, g.Reason == "drop", "gap reason %q", g.Reason)
			dirs[g.Dir] = true
		}
		incomplete := 0
		for _, f := range k.tf.fpdu {
			if !f.Captured {
				incomplete++
			}
		}
		expect(t, dirs["i2r"] && dirs["r2i"] && incomplete >= 2, "gaps %v, incomplete FPDUs %d", dirs, incomplete)
	},
	"crc-bad": func(t *testing.T, k *checked) {
		bad := 0
		for _, f := range k.tf.fpdu {
			if f.MPA.CRCStatus == "bad" {
				bad++
			}
		}
		expect(t, bad == 3 && k.tf.conns[0].CRCErrors == 3, "%d bad CRCs", bad)
	},
	"midstream": func(t *testing.T, k *checked) { midstreamClaim(t, k, false) },
	"midstream-markers": func(t *testing.T, k *checked) {
		midstreamClaim(t, k, true)
	},
	"midstream-markers-r2i": func(t *testing.T, k *checked) {
		midstreamClaim(t, k, true)
		expect(t, !hasMarkers(k.fpdus("i2r")) && hasMarkers(k.fpdus("r2i")), "markers not r2i only")
	},
	"terminate-rdmap": func(t *testing.T, k *checked) { terminateClaim(t, k, 0, false) },
	"terminate-ddp":   func(t *testing.T, k *checked) { terminateClaim(t, k, 1, false) },
	"terminate-llp": func(t *testing.T, k *checked) {
		terminateClaim(t, k, 2, false)
		expect(t, k.tf.conns[0].State == "reset" && k.c.pkts[len(k.c.pkts)-1].rst, "no RST at the end")
		expect(t, k.tf.conns[0].CRCErrors == 1, "no CRC error before the Terminate")
	},
	"terminate-siw": func(t *testing.T, k *checked) { terminateClaim(t, k, 0, true) },
	"reject": func(t *testing.T, k *checked) {
		expect(t, len(k.tf.mpa) == 2 && k.tf.mpa[1].Kind == "reply" && k.tf.mpa[1].R, "no reject reply")
		expect(t, len(k.tf.fpdu) == 0 && k.tf.conns[0].State == "rejected" && k.tf.conns[0].MPA.Rejected, "conn %+v", k.tf.conns[0])
	},
	"no-reply": func(t *testing.T, k *checked) {
		expect(t, len(k.tf.mpa) == 1 && k.tf.mpa[0].Rev == 3, "mpa %v", k.tf.mpa)
		expect(t, k.tf.conns[0].State == "no_reply", "state %q", k.tf.conns[0].State)
	},
	"multi-conn": func(t *testing.T, k *checked) {
		expect(t, len(k.tf.conns) == 3, "%d conns", len(k.tf.conns))
		owner := map[string]int{}
		for _, c := range k.tf.conns {
			owner[c.Initiator] = c.Conn
			owner[c.Responder+">"] = c.Conn
		}
		switches, last := 0, -1
		for _, p := range k.c.pkts {
			c, ok := owner[p.src.String()]
			if !ok {
				c = owner[p.src.String()+">"]
			}
			if c != last {
				switches++
				last = c
			}
		}
		expect(t, switches >= 10, "connections switch only %d times in the capture", switches)
	},
	"seq-wrap": func(t *testing.T, k *checked) {
		for _, d := range []string{"i2r", "r2i"} {
			wraps := false
			for _, f := range k.fpdus(d) {
				wraps = wraps || uint64(f.Seq)+uint64(f.Len) > 1<<32
			}
			expect(t, wraps, "%s: no FPDU straddles sequence 2^32", d)
		}
	},
	"snaplen": func(t *testing.T, k *checked) {
		expect(t, k.c.snaplen == 128, "snaplen %d", k.c.snaplen)
		incomplete := 0
		for _, f := range k.tf.fpdu {
			if !f.Captured {
				incomplete++
			}
		}
		expect(t, incomplete > 0 && len(k.tf.gaps) > 0 && k.tf.gaps[0].Reason == "snaplen", "incomplete %d gaps %d", incomplete, len(k.tf.gaps))
		for _, p := range k.c.pkts {
			expect(t, p.capLen <= 128, "frame %d captured %d octets", p.frame, p.capLen)
		}
	},
	"link-raw": func(t *testing.T, k *checked) { expect(t, k.c.linkType == 101, "link type %d", k.c.linkType) },
	"link-sll": func(t *testing.T, k *checked) { expect(t, k.c.linkType == 113, "link type %d", k.c.linkType) },
	"rfc7306": func(t *testing.T, k *checked) {
		ops := k.opcodes()
		for _, op := range []uint8{8, 9, 10, 11} {
			expect(t, ops[op] > 0, "no opcode %d", op)
		}
	},
}

func midstreamClaim(t *testing.T, k *checked, withMarkers bool) {
	cr := k.tf.conns[0]
	expect(t, cr.Midstream && !cr.Handshake && !k.c.pkts[0].syn, "conn %+v", cr)
	for _, m := range k.tf.mpa {
		expect(t, !m.Captured && m.Frame == 0, "MPA frame captured in a mid-stream capture")
	}
	captured, missing := 0, 0
	for _, f := range k.tf.fpdu {
		if f.Captured {
			captured++
		} else {
			missing++
		}
	}
	expect(t, captured >= 5 && missing >= 3, "captured %d, missing %d", captured, missing)
	expect(t, hasMarkers(k.all()) == withMarkers, "markers %v", withMarkers)
}

func terminateClaim(t *testing.T, k *checked, layer uint8, siw bool) {
	for _, f := range k.fpdus("r2i") {
		if f.RDMAP.Opcode == 7 {
			tm := f.RDMAP.Term
			expect(t, tm.Layer == layer && tm.SiwLayout == siw && *f.DDP.QN == 2, "terminate %+v", tm)
			if layer == 0 && !siw {
				expect(t, tm.R && tm.RDMAP != nil && tm.D, "no terminated RDMA header")
			}
			if layer == 1 {
				expect(t, tm.D && tm.DDP != nil && tm.DDP.T, "no terminated DDP header")
			}
			return
		}
	}
	t.Error("no Terminate")
}

// TestTshark decodes the rev 1 marker-free captures with tshark and
// compares the opcodes it finds in each frame (an FPDU is shown in the
// frame that completes it) and the CRCs it computes with the truth.
func TestTshark(t *testing.T) {
	bin, err := exec.LookPath("tshark")
	if err != nil {
		if os.Getenv("IWARP_REQUIRE_TSHARK") == "1" {
			t.Fatal("tshark not found and IWARP_REQUIRE_TSHARK=1")
		}
		t.Skip("tshark not installed; set IWARP_REQUIRE_TSHARK=1 to make this a failure")
	}
	dir := t.TempDir()
	for _, n := range []string{"rev1-crc", "rev1-nocrc", "mss-span", "crc-bad", "link-raw", "link-sll", "rfc7306"} {
		t.Run(n, func(t *testing.T) {
			s := mustNamed(t, n, 5)
			path := dir + "/" + n + ".pcap"
			if _, err := WriteFiles(s, path); err != nil {
				t.Fatal(err)
			}
			tr, err := os.ReadFile(TruthPath(path))
			if err != nil {
				t.Fatal(err)
			}
			tf := parseTruth(t, tr)
			want := map[uint64][]string{}
			wantCRC := map[uint64][]string{}
			for _, f := range tf.fpdu {
				last := f.Frames[len(f.Frames)-1]
				want[last] = append(want[last], "0x"+hex2(f.RDMAP.Opcode))
				if f.MPA.CRCStatus == "ok" {
					c := f.MPA.CRC
					wantCRC[last] = append(wantCRC[last], "0x"+strconv.FormatUint(uint64(c>>24|(c>>8)&0xFF00|(c<<8)&0xFF0000|c<<24), 16))
				}
			}
			cmd := exec.CommandContext(context.Background(), bin, "-r", path, "-T", "fields", "-E", "separator=;",
				"-e", "frame.number", "-e", "iwarp_rdma.opcode", "-e", "iwarp_mpa.crc_check")
			out, err := cmd.Output()
			if err != nil {
				var ee *exec.ExitError
				if errors.As(err, &ee) {
					t.Logf("tshark stderr: %s", ee.Stderr)
				}
				t.Fatal(err)
			}
			got := map[uint64][]string{}
			gotCRC := map[uint64][]string{}
			for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				f := strings.Split(line, ";")
				if len(f) < 3 || f[1] == "" {
					continue
				}
				fr, _ := strconv.ParseUint(f[0], 10, 64)
				got[fr] = strings.Split(f[1], ",")
				if f[2] != "" {
					for _, c := range strings.Split(f[2], ",") {
						v, _ := strconv.ParseUint(strings.TrimPrefix(c, "0x"), 16, 32)
						gotCRC[fr] = append(gotCRC[fr], "0x"+strconv.FormatUint(v, 16))
					}
				}
			}
			for fr, w := range want {
				if g := got[fr]; !slices.Equal(sorted(g), sorted(w)) {
					t.Errorf("frame %d: tshark opcodes %v, truth %v", fr, g, w)
				}
			}
			for fr, g := range got {
				if _, ok := want[fr]; !ok {
					t.Errorf("frame %d: tshark opcodes %v, truth has none", fr, g)
				}
			}
			for fr, w := range wantCRC {
				for _, c := range w {
					if !slices.Contains(gotCRC[fr], c) {
						t.Errorf("frame %d: CRC %s not among tshark's %v", fr, c, gotCRC[fr])
					}
				}
			}
		})
	}
}

func hex2(v uint8) string {
	const d = "0123456789abcdef"
	return string([]byte{d[v>>4], d[v&0xF]})
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// TestScenarioErrors: invalid scenarios are refused with the sentinels.
func TestScenarioErrors(t *testing.T) {
	base := func() Scenario { return mustNamed(t, "rev1-crc", 1) }
	cases := []struct {
		name string
		mod  func(*Scenario)
		want error
	}{
		{"no conns", func(s *Scenario) { s.Conns = nil }, ErrNoConns},
		{"mixed families", func(s *Scenario) { s.Conns[0].Responder = netip.MustParseAddrPort("[2001:db8::1]:1") }, ErrAddrFamily},
		{"ops after reject", func(s *Scenario) { s.Conns[0].MPA.Reply.R = true }, ErrOpsRejected},
		{"bad exact size", func(s *Scenario) {
			s.Conns[0].Segmentation = SegmentExact
			s.Conns[0].ExactSegments[I2R] = []int{0}
		}, ErrBadSegSizes},
		{"drop and duplicate", func(s *Scenario) {
			s.Conns[0].Impair.Drop = []SegRef{{I2R, 1}}
			s.Conns[0].Impair.Duplicate = []SegRef{{I2R, 1}}
		}, ErrBadImpair},
		{"no such segment", func(s *Scenario) { s.Conns[0].Impair.Drop = []SegRef{{I2R, 999}} }, ErrBadImpair},
		{"start beyond stream", func(s *Scenario) { s.Conns[0].Impair.StartAt = &StartAt{Offset: 1 << 40} }, ErrBadImpair},
		{"bad op kind", func(s *Scenario) { s.Conns[0].Ops = []Op{{Kind: OpKind(99)}} }, ErrBadOp},
		{"negative size", func(s *Scenario) { s.Conns[0].Ops = []Op{{Kind: Send, Size: -1}} }, ErrBadOp},
		{"ulpdu too long", func(s *Scenario) { s.Conns[0].Ops = []Op{{Kind: Write, Size: 70000, MaxULPDU: 70000}} }, ErrULPDUTooLong},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := base()
			c.mod(&s)
			_, err := Generate(s, nil, nil)
			if !errors.Is(err, c.want) {
				t.Errorf("got %v, want %v", err, c.want)
			}
		})
	}
}

// TestLarge: the streamed scenario is deterministic and passes the checker.
func TestLarge(t *testing.T) {
	run := func(seed int64) ([]byte, []byte) {
		var p, tr bytes.Buffer
		if err := WriteLarge(&p, &tr, 2<<20, seed); err != nil {
			t.Fatal(err)
		}
		return p.Bytes(), tr.Bytes()
	}
	p1, t1 := run(3)
	p2, t2 := run(3)
	if sha256.Sum256(p1) != sha256.Sum256(p2) || !bytes.Equal(t1, t2) {
		t.Fatal("WriteLarge is not deterministic")
	}
	if len(p1) < 2<<20 {
		t.Fatalf("pcap has %d octets, asked for %d", len(p1), 2<<20)
	}
	k := &checked{}
	k.c, k.tf, k.st = checkCapture(t, p1, t1)
	allCRC(t, k, "ok")
	expect(t, hasMarkers(k.fpdus("i2r")) && !hasMarkers(k.fpdus("r2i")), "large: markers should be i2r only")
	spans, shared := false, false
	whole := map[uint64]int{}
	for _, f := range k.tf.fpdu {
		spans = spans || len(f.Frames) >= 2
		if len(f.Frames) == 1 {
			whole[f.Frames[0]]++
		}
	}
	for _, n := range whole {
		shared = shared || n >= 2
	}
	expect(t, spans && shared, "large: FPDU over 2+ segments %v, segment with 2+ FPDUs %v", spans, shared)
}

// TestReverseCRC: Impairments.ReverseCRC sends the FPDU's CRC32c with its
// octets in reverse order: the field read from the capture, reversed, is
// the CRC32c of the octets before it (computed here with hash/crc32), and
// the truth records the field as sent and the CRC as bad.
func TestReverseCRC(t *testing.T) {
	c := Conn{
		Initiator: netip.MustParseAddrPort("192.0.2.2:40100"), Responder: netip.MustParseAddrPort("192.0.2.1:7174"),
		MPA:          &MPAParams{Request: MPAFrame{Rev: 1, C: true}, Reply: MPAFrame{Rev: 1, C: true}},
		Segmentation: SegmentPerRecord,
		Ops:          []Op{{Dir: I2R, Kind: Send, Size: 40}, {Dir: I2R, Kind: Send, Size: 41}},
	}
	c.Impair.ReverseCRC = []FPDURef{{I2R, 1}}
	var pcap bytes.Buffer
	res, err := Generate(Scenario{Seed: 1, Conns: []Conn{c}}, &pcap, nil)
	if err != nil {
		t.Fatal(err)
	}
	var fpdus []*TruthFPDU
	for _, r := range res.Records {
		if f, ok := r.(*TruthFPDU); ok && f.Dir == "i2r" {
			fpdus = append(fpdus, f)
		}
	}
	if len(fpdus) != 2 {
		t.Fatalf("%d FPDUs", len(fpdus))
	}
	for i, f := range fpdus {
		// One FPDU a segment, no markers: the FPDU is the frame's TCP
		// payload, at the end of the frame.
		frame := frameBytes(t, pcap.Bytes(), f.Frame)
		wire := frame[len(frame)-f.Len:]
		field := binary.LittleEndian.Uint32(wire[f.Len-4:])
		sum := crc32.Checksum(wire[:f.Len-4], crc32.MakeTable(crc32.Castagnoli))
		if field != f.MPA.CRC {
			t.Errorf("FPDU %d: field %#x, truth %#x", i, field, f.MPA.CRC)
		}
		want, status := sum, "ok"
		if i == 1 {
			want, status = bits.ReverseBytes32(sum), "bad"
		}
		if field != want || f.MPA.CRCStatus != status {
			t.Errorf("FPDU %d: field %#x (CRC32c %#x), status %s; want %#x, %s", i, field, sum, f.MPA.CRCStatus, want, status)
		}
	}
}

// frameBytes returns frame n (from 1) of a little-endian pcap file.
func frameBytes(t *testing.T, pcap []byte, n uint64) []byte {
	t.Helper()
	off := 24
	for i := uint64(1); off+16 <= len(pcap); i++ {
		l := int(binary.LittleEndian.Uint32(pcap[off+8:]))
		if i == n {
			return pcap[off+16 : off+16+l]
		}
		off += 16 + l
	}
	t.Fatalf("no frame %d", n)
	return nil
}

// TestPause: Op.Pause delays an operation's first segment by the pause on
// top of the usual gap (at most gapRange's largest, 600 µs), in the frames'
// timestamps and in the truth; the other octets do not move, and a
// negative pause is refused.
func TestPause(t *testing.T) {
	c := Conn{
		Initiator: netip.MustParseAddrPort("192.0.2.2:40101"), Responder: netip.MustParseAddrPort("192.0.2.1:7174"),
		Handshake: true, MPA: &MPAParams{Request: MPAFrame{Rev: 1, C: true}, Reply: MPAFrame{Rev: 1, C: true}},
		Ops: []Op{{Dir: I2R, Kind: Send, Size: 40}, {Dir: I2R, Kind: Send, Size: 41, Pause: 250 * time.Millisecond},
			{Dir: R2I, Kind: Write, Size: 3000, STag: 7, Pause: time.Second}},
	}
	gen := func(c Conn) []*TruthFPDU {
		var pcap bytes.Buffer
		res, err := Generate(Scenario{Seed: 1, Conns: []Conn{c}}, &pcap, nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []*TruthFPDU
		for _, r := range res.Records {
			if f, ok := r.(*TruthFPDU); ok {
				out = append(out, f)
			}
		}
		return out
	}
	ts := func(f *TruthFPDU) time.Time {
		v, err := time.Parse(time.RFC3339Nano, f.TS)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	got := gen(c)
	plain := c
	plain.Ops = slices.Clone(c.Ops)
	for i := range plain.Ops {
		plain.Ops[i].Pause = 0
	}
	want := gen(plain)
	// The Write takes two FPDUs.
	if len(got) != 5 || len(want) != 5 {
		t.Fatalf("%d and %d FPDUs, want 5", len(got), len(want))
	}
	for i, p := range []time.Duration{0, 250 * time.Millisecond, time.Second, 0, 0} {
		if i > 0 {
			d := ts(got[i]).Sub(ts(got[i-1]))
			if d < p || d > p+time.Millisecond {
				t.Errorf("FPDU %d comes %v after the one before, want the pause %v and a gap", i, d, p)
			}
		}
		if got[i].Off != want[i].Off || got[i].Len != want[i].Len || got[i].MPA.CRC != want[i].MPA.CRC {
			t.Errorf("FPDU %d: the pause moved its octets", i)
		}
	}
	c.Ops = []Op{{Kind: Send, Pause: -time.Second}}
	if _, err := Generate(Scenario{Conns: []Conn{c}}, nil, nil); !errors.Is(err, ErrBadOp) {
		t.Errorf("negative pause: %v", err)
	}
}
