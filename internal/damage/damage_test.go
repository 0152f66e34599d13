package damage

import (
	"bytes"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/iwarpkit/iwarpkit/capture"
)

// loadSources reads the bundled captures, in a fixed order.
func loadSources(tb testing.TB) ([][]byte, []string) {
	tb.Helper()
	var names []string
	for _, g := range []string{"../../testdata/siw/*.pcap", "../../testdata/synth/*.pcap"} {
		m, err := filepath.Glob(g)
		if err != nil {
			tb.Fatal(err)
		}
		names = append(names, m...)
	}
	if len(names) == 0 {
		tb.Fatal("no captures in testdata")
	}
	srcs := make([][]byte, len(names))
	for i, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			tb.Fatal(err)
		}
		srcs[i] = b
	}
	return srcs, names
}

// readAll reads a capture with the capture package: the frames read and
// the error that ended the file (nil at a clean end).
func readAll(data []byte) (frames [][]byte, openErr, err error) {
	src, err := capture.NewSource(bytes.NewReader(data), "v")
	if err != nil {
		return nil, err, nil
	}
	defer src.Close()
	for {
		p, err := src.Next()
		if err == io.EOF {
			return frames, nil, nil
		}
		if err != nil {
			return frames, nil, err
		}
		frames = append(frames, append([]byte(nil), p.Data...))
	}
}

func TestVariantsDeterministic(t *testing.T) {
	srcs, _ := loadSources(t)
	n := 3 * len(Kinds())
	a := Variants(7, n, srcs)
	b := Variants(7, n, srcs)
	c := Variants(8, n, srcs)
	if len(a) != n {
		t.Fatalf("%d variants, want %d", len(a), n)
	}
	same := 0
	for i := range a {
		if a[i].Name != b[i].Name || !bytes.Equal(a[i].Data, b[i].Data) || a[i].FileHeader != b[i].FileHeader {
			t.Errorf("variant %d differs between runs: %s vs %s", i, a[i].Name, b[i].Name)
		}
		if g := Generate(7, i, srcs); g.Name != a[i].Name || !bytes.Equal(g.Data, a[i].Data) {
			t.Errorf("Generate(7, %d) = %s, Variants gave %s", i, g.Name, a[i].Name)
		}
		if bytes.Equal(a[i].Data, c[i].Data) {
			same++
		}
	}
	if same > n/4 {
		t.Errorf("%d of %d variants identical for seeds 7 and 8", same, n)
	}
}

var nameRE = regexp.MustCompile(`^[0-9]{4}-[a-z-]+-s[0-9]{2}(\+s[0-9]{2})*(-[a-z0-9.+-]+)?$`)

func TestVariantsKindsAndNames(t *testing.T) {
	srcs, _ := loadSources(t)
	kinds := Kinds()
	vs := Variants(1, 4*len(kinds), srcs)
	seen := map[string]int{}
	names := map[string]bool{}
	for i, v := range vs {
		seen[v.Kind]++
		if v.Kind != kinds[i%len(kinds)] {
			t.Errorf("variant %d (%s) has kind %s, want %s", i, v.Name, v.Kind, kinds[i%len(kinds)])
		}
		if !nameRE.MatchString(v.Name) || len(v.Name) > 220 {
			t.Errorf("bad name %q", v.Name)
		}
		if names[v.Name] {
			t.Errorf("duplicate name %q", v.Name)
		}
		names[v.Name] = true
		for _, s := range srcs {
			if bytes.Equal(v.Data, s) && v.Kind != KindNgOther {
				t.Errorf("%s: identical to its source", v.Name)
			}
		}
	}
	for _, k := range kinds {
		if seen[k] != 4 {
			t.Errorf("kind %s: %d variants, want 4", k, seen[k])
		}
	}
}

// TestFileHeaderFlag: a variant not marked FileHeader must open as a
// capture (the reader may only refuse files whose header was damaged).
func TestFileHeaderFlag(t *testing.T) {
	srcs, _ := loadSources(t)
	for _, v := range Variants(3, 40*len(Kinds()), srcs) {
		_, openErr, _ := readAll(v.Data)
		if openErr != nil && !v.FileHeader {
			t.Errorf("%s: not marked FileHeader, but does not open: %v", v.Name, openErr)
		}
	}
}

// TestStructureKept: the structure-aware kinds that only touch packet
// contents or timestamps leave a file that reads to the end without a
// file error, with as many frames as the source for the in-place kinds.
func TestStructureKept(t *testing.T) {
	srcs, _ := loadSources(t)
	frames := make([]int, len(srcs))
	for i, s := range srcs {
		fs, _, err := readAll(s)
		if err != nil {
			t.Fatalf("source %d: %v", i, err)
		}
		frames[i] = len(fs)
	}
	inPlace := map[string]bool{KindPayloadFlip: true, KindPayloadRandom: true, KindHeaderFlip: true, KindTimeBack: true, KindSnapCut: true}
	clean := map[string]bool{KindReorder: true, KindZeroLen: true}
	checked := 0
	for _, v := range Variants(5, 20*len(Kinds()), srcs) {
		if !inPlace[v.Kind] && !clean[v.Kind] {
			continue
		}
		checked++
		fs, openErr, err := readAll(v.Data)
		if openErr != nil || err != nil {
			t.Errorf("%s: open %v, read %v", v.Name, openErr, err)
			continue
		}
		if inPlace[v.Kind] {
			s := sourceIndex(t, v.Name)
			if len(fs) != frames[s] {
				t.Errorf("%s: %d frames, source has %d", v.Name, len(fs), frames[s])
			}
		}
	}
	if checked < 100 {
		t.Errorf("only %d variants checked", checked)
	}
}

var sourceRE = regexp.MustCompile(`-s([0-9]{2})`)

// sourceIndex reads the (first) source index out of a variant name.
func sourceIndex(t *testing.T, name string) int {
	t.Helper()
	m := sourceRE.FindStringSubmatch(name)
	if m == nil {
		t.Fatalf("no source in %q", name)
	}
	s, err := strconv.Atoi(m[1])
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestPayloadOnly: payload damage changes octets inside TCP payloads only.
func TestPayloadOnly(t *testing.T) {
	srcs, _ := loadSources(t)
	n := 0
	for _, v := range Variants(9, 30*len(Kinds()), srcs) {
		if v.Kind != KindPayloadFlip && v.Kind != KindPayloadRandom {
			continue
		}
		s := sourceIndex(t, v.Name)
		src, dst := parsePcap(srcs[s]), parsePcap(v.Data)
		if dst == nil || len(src.recs) != len(dst.recs) || !bytes.Equal(src.hdr, dst.hdr) {
			t.Fatalf("%s: framing changed", v.Name)
		}
		changed := 0
		for i := range src.recs {
			a, b := src.recs[i].data, dst.recs[i].data
			if bytes.Equal(a, b) {
				continue
			}
			changed++
			start, end, ok := tcpPayload(src.link, a)
			if !ok || len(a) != len(b) || !bytes.Equal(a[:start], b[:start]) || !bytes.Equal(a[end:], b[end:]) {
				t.Errorf("%s: frame %d changed outside its TCP payload", v.Name, i+1)
			}
		}
		if changed == 0 && v.Kind == KindPayloadRandom {
			t.Errorf("%s: nothing changed", v.Name)
		}
		n++
	}
	if n == 0 {
		t.Fatal("no payload variants")
	}
}

func TestTCPPayload(t *testing.T) {
	// Hand-built headers: Ethernet (14), IPv4 with 4 octets of options
	// (IHL 6 = 24), TCP with 12 octets of options (data offset 8 = 32),
	// 5 payload octets, 6 octets of Ethernet padding.
	eth := func(etype uint16) []byte {
		b := make([]byte, 14)
		binary.BigEndian.PutUint16(b[12:], etype)
		return b
	}
	tcp := make([]byte, 32)
	tcp[12] = 8 << 4
	ip4 := make([]byte, 24)
	ip4[0], ip4[9] = 0x46, 6
	binary.BigEndian.PutUint16(ip4[2:], 24+32+5)
	payload := []byte("hello")
	v4 := append(append(append(append(eth(0x0800), ip4...), tcp...), payload...), make([]byte, 6)...)

	ip6 := make([]byte, 40)
	ip6[0], ip6[6] = 0x60, 6
	binary.BigEndian.PutUint16(ip6[4:], 32+5)
	v6 := append(append(append(eth(0x86dd), ip6...), tcp...), payload...)

	vlan := append(eth(0x8100), 0, 1, 0x08, 0x00) // tag, then the IPv4 ethertype
	vlan = append(append(append(vlan, ip4...), tcp...), payload...)

	frag := append([]byte(nil), v4...)
	frag[14+6] = 0x20 // more fragments

	udp := append([]byte(nil), v4...)
	udp[14+9] = 17

	sll := make([]byte, 16)
	binary.BigEndian.PutUint16(sll[14:], 0x0800)
	sllFrame := append(append(append(sll, ip4...), tcp...), payload...)

	for _, tc := range []struct {
		name       string
		link       uint32
		data       []byte
		start, end int
		ok         bool
	}{
		{"ipv4", linkEthernet, v4, 14 + 24 + 32, 14 + 24 + 32 + 5, true},
		{"ipv6", linkEthernet, v6, 14 + 40 + 32, 14 + 40 + 32 + 5, true},
		{"vlan", linkEthernet, vlan, 18 + 24 + 32, 18 + 24 + 32 + 5, true},
		{"sll", linkSLL, sllFrame, 16 + 24 + 32, 16 + 24 + 32 + 5, true},
		{"raw", linkRaw, v4[14:], 24 + 32, 24 + 32 + 5, true},
		{"snapcut", linkEthernet, v4[:14+24+32+2], 14 + 24 + 32, 14 + 24 + 32 + 2, true},
		{"no payload", linkEthernet, v4[:14+24+32], 0, 0, false},
		{"fragment", linkEthernet, frag, 0, 0, false},
		{"udp", linkEthernet, udp, 0, 0, false},
		{"short", linkEthernet, v4[:20], 0, 0, false},
		{"empty", linkEthernet, nil, 0, 0, false},
		{"unknown link", 147, v4, 0, 0, false},
	} {
		start, end, ok := tcpPayload(tc.link, tc.data)
		if ok != tc.ok || (ok && (start != tc.start || end != tc.end)) {
			t.Errorf("%s: got [%d,%d) %v, want [%d,%d) %v", tc.name, start, end, ok, tc.start, tc.end, tc.ok)
		}
	}
}

// TestULPDULenFor: an FPDU is the 2-octet ULPDU_Length, the ULPDU, a pad
// to a multiple of 4 and the 4-octet CRC (RFC 5044 §4.1).
func TestULPDULenFor(t *testing.T) {
	for _, tc := range []struct{ n, want int }{
		{16, 10}, // 2+10 = 12, no pad, +4
		{20, 14}, // 2+14 = 16
		{24, 18}, // 2+18 = 20
		{17, 11}, // no FPDU is 17 octets long: n-6
		{6, 0},   // empty ULPDU: 2, pad 2, CRC... 2+0+2+4 = 8 != 6: n-6 = 0
		{8, 2},   // 2+2 = 4, +4 = 8 (the largest fitting length wins)
		{3, 0},
	} {
		if got := ulpduLenFor(tc.n); got != tc.want {
			t.Errorf("ulpduLenFor(%d) = %d, want %d", tc.n, got, tc.want)
		}
	}
}

// TestPcapRoundTrip: parsing and writing a source gives the source back,
// and its pcapng conversion reads as the same frames.
func TestPcapRoundTrip(t *testing.T) {
	srcs, names := loadSources(t)
	for i, s := range srcs {
		f := parsePcap(s)
		if f == nil || len(f.tail) != 0 {
			t.Fatalf("%s: does not parse", names[i])
		}
		if !bytes.Equal(f.bytes(), s) {
			t.Errorf("%s: bytes(parse(x)) != x", names[i])
		}
		want, _, err := readAll(s)
		if err != nil {
			t.Fatal(err)
		}
		ng := f.toPcapng(func(i int) bool { return i%3 == 0 })
		got, openErr, err := readAll(ng)
		if openErr != nil || err != nil {
			t.Errorf("%s as pcapng: open %v, read %v", names[i], openErr, err)
			continue
		}
		if len(got) != len(want) {
			t.Errorf("%s as pcapng: %d frames, want %d", names[i], len(got), len(want))
			continue
		}
		for k := range got {
			if !bytes.Equal(got[k], want[k]) {
				t.Errorf("%s as pcapng: frame %d differs", names[i], k+1)
				break
			}
		}
		if bs := ngBlocks(ng); len(bs) != 2+len(want) || bs[0].typ != ngSHB || bs[1].typ != ngIDB || bs[2].typ != ngEPB {
			t.Errorf("%s as pcapng: unexpected blocks %v", names[i], bs[:min(3, len(bs))])
		}
	}
}

func TestVariantsOddSources(t *testing.T) {
	for _, srcs := range [][][]byte{nil, {nil}, {{}}, {[]byte("not a capture")}, {{0xd4, 0xc3, 0xb2, 0xa1}}} {
		vs := Variants(1, 2*len(Kinds()), srcs)
		for _, v := range vs {
			if !v.FileHeader {
				t.Errorf("%q: %s not marked FileHeader", srcs, v.Name)
			}
		}
	}
	if Variants(1, 5, nil) != nil || Generate(1, 0, nil).Name != "" {
		t.Error("no sources: want no variants")
	}
}

// FuzzVariants: the generator takes any source without panicking, next to
// a real capture (so that the structure-aware kinds run too).
func FuzzVariants(f *testing.F) {
	good, err := os.ReadFile("../../testdata/synth/reject.pcap")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(int64(1), good[:100])
	f.Add(int64(2), good)
	f.Add(int64(3), []byte{0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 1, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, seed int64, data []byte) {
		if len(data) > 1<<16 {
			return
		}
		for _, v := range Variants(seed, len(Kinds()), [][]byte{data, good}) {
			if v.Name == "" || v.Kind == "" {
				t.Fatalf("empty name or kind: %+v", v.Name)
			}
		}
	})
}

func BenchmarkVariants(b *testing.B) {
	srcs, _ := loadSources(b)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		Generate(1, i, srcs)
	}
}
