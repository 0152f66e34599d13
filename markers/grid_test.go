package markers

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"
)

// Every expected value below is worked out by hand from the grid rule: the
// k-th marker of an FPDU (k >= 0) sits before its plain octet
// lead + 508k, where lead is the distance from the FPDU start to the first
// grid position at or after it.

func TestGridPositions(t *testing.T) {
	g := Grid{Origin: 1000}
	nextTests := []struct{ off, want uint64 }{
		{0, 1000}, {999, 1000}, {1000, 1000}, {1001, 1512}, {1511, 1512},
		{1512, 1512}, {1513, 2024},
	}
	for _, tt := range nextTests {
		if got := g.Next(tt.off); got != tt.want {
			t.Errorf("Next(%d) = %d, want %d", tt.off, got, tt.want)
		}
	}
	markerTests := []struct {
		off  uint64
		want bool
	}{
		{488, false}, // congruent to the origin but before it
		{999, false}, {1000, true}, {1004, false}, {1512, true}, {2024, true}, {2025, false},
	}
	for _, tt := range markerTests {
		if got := g.IsMarker(tt.off); got != tt.want {
			t.Errorf("IsMarker(%d) = %v, want %v", tt.off, got, tt.want)
		}
	}
	countTests := []struct {
		start, end uint64
		want       int
	}{
		{0, 1000, 0}, {0, 1001, 1}, {1000, 1000, 0}, {1000, 1001, 1},
		{1000, 2024, 2}, {1000, 2025, 3}, {1001, 2025, 2}, {2025, 1000, 0},
		{0, 1000 + 512*10, 10},
	}
	for _, tt := range countTests {
		if got := g.Count(tt.start, tt.end); got != tt.want {
			t.Errorf("Count(%d, %d) = %d, want %d", tt.start, tt.end, got, tt.want)
		}
	}
}

func TestWireLayout(t *testing.T) {
	type marker struct {
		wireOff int // offset from the FPDU start
		ptr     uint16
	}
	tests := []struct {
		name     string
		origin   uint64
		start    uint64
		plainLen int
		wireLen  int
		markers  []marker
		// plain index -> wire offset checks
		idx  []int
		wIdx []int
	}{
		{
			// 412 plain octets from 100 end at 512: the marker there belongs
			// to the next FPDU.
			name: "ends exactly on the grid", start: 100, plainLen: 412, wireLen: 412,
			idx: []int{0, 411}, wIdx: []int{0, 411},
		},
		{
			// Marker at 0 (FPDUPTR 0) then 508 plain octets: 512 on the wire,
			// ending at the next grid position 512.
			name: "starts with a marker, ends on the grid", start: 0, plainLen: 508, wireLen: 512,
			markers: []marker{{0, 0}},
			idx:     []int{0, 507}, wIdx: []int{4, 511},
		},
		{
			// lead 412: markers before plain 412 and 920; 1428 >= 1000.
			name: "two markers", start: 100, plainLen: 1000, wireLen: 1008,
			markers: []marker{{412, 412}, {924, 924}},
			idx:     []int{411, 412, 919, 920, 999}, wIdx: []int{411, 416, 923, 928, 1007},
		},
		{
			// lead 0: markers before plain 0, 508, 1016; 1524 >= 1100.
			name: "three markers", start: 0, plainLen: 1100, wireLen: 1112,
			markers: []marker{{0, 0}, {512, 512}, {1024, 1024}},
			idx:     []int{0, 507, 508, 1015, 1016, 1099}, wIdx: []int{4, 511, 516, 1023, 1028, 1111},
		},
		{
			// ULPDU_Length 505, PAD 1, CRC: 2+505+1+4 = 512 plain octets; the
			// CRC starts at plain 508, exactly where the second marker goes,
			// so the marker sits between PAD (plain 507) and CRC.
			name: "marker between PAD and CRC", start: 0, plainLen: 512, wireLen: 520,
			markers: []marker{{0, 0}, {512, 512}},
			idx:     []int{507, 508, 511}, wIdx: []int{511, 516, 519},
		},
		{
			// A start one octet before the grid position: the marker splits
			// ULPDU_Length (only possible for a non-conforming sender, since
			// FPDUs are 4-aligned to the grid).
			name: "marker splits ULPDU_Length", start: 511, plainLen: 8, wireLen: 12,
			markers: []marker{{1, 1}},
			idx:     []int{0, 1, 7}, wIdx: []int{0, 5, 11},
		},
		{
			name: "marker at the FPDU start", start: 1024, plainLen: 32, wireLen: 36,
			markers: []marker{{0, 0}},
			idx:     []int{0, 1, 31}, wIdx: []int{4, 5, 35},
		},
		{
			// Grid origin 7: FPDU at 1031 = 7 + 2*512 starts on a marker.
			name: "non-zero origin", origin: 7, start: 1031, plainLen: 600, wireLen: 608,
			markers: []marker{{0, 0}, {512, 512}},
			idx:     []int{0, 508}, wIdx: []int{4, 516},
		},
		{
			// FPDU before the origin (for example while the grid origin is
			// still ahead): no marker until the origin.
			name: "before the origin", origin: 1000, start: 900, plainLen: 200, wireLen: 204,
			markers: []marker{{100, 100}},
			idx:     []int{99, 100}, wIdx: []int{99, 104},
		},
		{name: "empty", start: 0, plainLen: 0, wireLen: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := Grid{Origin: tt.origin}
			if got := g.WireLen(tt.start, tt.plainLen); got != tt.wireLen {
				t.Errorf("WireLen = %d, want %d", got, tt.wireLen)
			}
			for i, idx := range tt.idx {
				if got := g.WireOffset(tt.start, idx); got != tt.wIdx[i] {
					t.Errorf("WireOffset(%d) = %d, want %d", idx, got, tt.wIdx[i])
				}
			}
			plain := make([]byte, tt.plainLen)
			for i := range plain {
				plain[i] = byte(i%250) + 1 // never 0: markers stand out
			}
			wire := g.Insert(nil, plain, tt.start)
			if len(wire) != tt.wireLen {
				t.Fatalf("len(Insert) = %d, want %d", len(wire), tt.wireLen)
			}
			var got []marker
			for i := 0; i+Size <= len(wire); i++ {
				if wire[i] == 0 && wire[i+1] == 0 {
					got = append(got, marker{i, uint16(wire[i+2])<<8 | uint16(wire[i+3])})
					i += Size - 1
				}
			}
			if !slices.Equal(got, tt.markers) {
				t.Errorf("markers = %v, want %v", got, tt.markers)
			}
			back, ms := g.Strip(nil, wire, tt.start, nil)
			if !bytes.Equal(back, plain) {
				t.Errorf("Strip(Insert(x)) != x")
			}
			if len(ms) != len(tt.markers) {
				t.Fatalf("Strip found %d markers, want %d", len(ms), len(tt.markers))
			}
			for i, m := range ms {
				want := Found{Off: tt.start + uint64(tt.markers[i].wireOff), FPDUPtr: tt.markers[i].ptr}
				if m != want {
					t.Errorf("marker %d = %+v, want %+v", i, m, want)
				}
				if !CheckPtr(m, tt.start) {
					t.Errorf("CheckPtr(%+v, %d) = false", m, tt.start)
				}
			}
		})
	}
}

func TestInsertBytes(t *testing.T) {
	// 12 plain octets from 504: 8 octets up to the grid position 512, the
	// marker 00 00 00 08 (8 octets from the FPDU start), 4 more octets.
	plain := []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
	want := []byte{1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 8, 9, 10, 11, 12}
	g := Grid{}
	wire := g.Insert([]byte{0xEE}, plain, 504)
	if !bytes.Equal(wire[1:], want) || wire[0] != 0xEE {
		t.Fatalf("Insert = % x, want ee % x", wire, want)
	}
}

func TestStripPartialMarkers(t *testing.T) {
	g := Grid{}
	wire := []byte{1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 8, 9, 10, 11, 12} // from 504, marker at 512
	tests := []struct {
		name   string
		from   int // index into wire
		to     int
		plain  []byte
		nFound int
	}{
		{"whole", 0, 16, []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, 1},
		{"starts inside the marker", 10, 16, []byte{9, 10, 11, 12}, 0},
		{"starts on the marker's last octet", 11, 16, []byte{9, 10, 11, 12}, 0},
		{"starts right after the marker", 12, 16, []byte{9, 10, 11, 12}, 0},
		{"ends inside the marker", 0, 10, []byte{1, 2, 3, 4, 5, 6, 7, 8}, 0},
		{"ends right before the marker", 0, 8, []byte{1, 2, 3, 4, 5, 6, 7, 8}, 0},
		{"only marker octets", 9, 11, nil, 0},
		{"ends right after the marker", 6, 12, []byte{7, 8}, 1},
		{"empty", 5, 5, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ms := g.Strip(nil, wire[tt.from:tt.to], 504+uint64(tt.from), nil)
			if !bytes.Equal(got, tt.plain) {
				t.Errorf("Strip = %v, want %v", got, tt.plain)
			}
			if len(ms) != tt.nFound {
				t.Errorf("found %d markers, want %d", len(ms), tt.nFound)
			}
			if len(ms) == 1 && (ms[0] != Found{Off: 512, FPDUPtr: 8}) {
				t.Errorf("marker = %+v", ms[0])
			}
		})
	}
}

func TestCheckPtr(t *testing.T) {
	tests := []struct {
		m     Found
		start uint64
		want  bool
	}{
		{Found{Off: 512, FPDUPtr: 8}, 504, true},
		{Found{Off: 512, FPDUPtr: 0}, 512, true},
		{Found{Off: 512, FPDUPtr: 12}, 504, false},
		{Found{Off: 512, Rsvd: 1, FPDUPtr: 8}, 504, false},
		{Found{Off: 512, FPDUPtr: 0}, 600, false},             // marker before the FPDU
		{Found{Off: 70000, FPDUPtr: 70000 - 65536}, 0, false}, // distance needs 17 bits
		{Found{Off: 65535, FPDUPtr: 65535}, 0, true},
	}
	for _, tt := range tests {
		if got := CheckPtr(tt.m, tt.start); got != tt.want {
			t.Errorf("CheckPtr(%+v, %d) = %v, want %v", tt.m, tt.start, got, tt.want)
		}
	}
}

// checkRoundTrip asserts the Insert/Strip properties for one FPDU.
func checkRoundTrip(t testing.TB, g Grid, start uint64, plain []byte) {
	t.Helper()
	if start > g.Origin && (start-g.Origin)%Interval < Size && !g.IsMarker(start) {
		return // inside a marker: no FPDU starts there
	}
	wire := g.Insert(nil, plain, start)
	if len(wire) != g.WireLen(start, len(plain)) {
		t.Fatalf("origin %d start %d len %d: len(Insert) = %d, WireLen = %d",
			g.Origin, start, len(plain), len(wire), g.WireLen(start, len(plain)))
	}
	back, ms := g.Strip(nil, wire, start, nil)
	if !bytes.Equal(back, plain) {
		t.Fatalf("origin %d start %d len %d: Strip(Insert(x)) != x", g.Origin, start, len(plain))
	}
	if n := g.Count(start, start+uint64(len(wire))); n != len(ms) {
		t.Fatalf("origin %d start %d len %d: Count = %d, markers found = %d", g.Origin, start, len(plain), n, len(ms))
	}
	for _, m := range ms {
		if !g.IsMarker(m.Off) {
			t.Fatalf("marker at %d is off the grid", m.Off)
		}
		if m.Off-start <= 0xFFFF && !CheckPtr(m, start) {
			t.Fatalf("origin %d start %d: CheckPtr(%+v) = false", g.Origin, start, m)
		}
	}
	for i := range plain {
		w := g.WireOffset(start, i)
		if w < 0 || w >= len(wire) || wire[w] != plain[i] {
			t.Fatalf("origin %d start %d: WireOffset(%d) = %d does not hold plain[%d]", g.Origin, start, i, w, i)
		}
		if g.IsMarker(start + uint64(w)) {
			t.Fatalf("WireOffset(%d) = %d lands on a marker", i, w)
		}
	}
}

func TestStripInsertProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, 3000)
	for i := range buf {
		buf[i] = byte(r.Uint32())
	}
	for _, origin := range []uint64{0, 3, 512, 1000} {
		g := Grid{Origin: origin}
		for start := uint64(0); start < 1600; start++ {
			for _, n := range []int{0, 1, 2, 3, 4, 8, 507, 508, 509, 511, 512, 513, 1016, 1017, 1100, 2999} {
				checkRoundTrip(t, g, start, buf[:n])
			}
		}
	}
	for range 2000 {
		g := Grid{Origin: r.Uint64N(1 << 40)}
		start := r.Uint64N(1 << 41)
		checkRoundTrip(t, g, start, buf[:r.IntN(len(buf))])
	}
}

// TestInsertInPlace: plain laid at the end of the room in dst's spare
// capacity that the wire form takes comes out as Insert into a fresh
// buffer makes it, without reallocating (the documented in-place use).
func TestInsertInPlace(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	src := make([]byte, 3000)
	for i := range src {
		src[i] = byte(r.Uint32())
	}
	for _, origin := range []uint64{0, 3, 512} {
		g := Grid{Origin: origin}
		for start := origin; start < origin+1100; start += 1 + uint64(r.IntN(7)) {
			if d := (start - origin) % Interval; d != 0 && d < Size {
				continue // inside a marker
			}
			for _, n := range []int{0, 1, 8, 507, 508, 509, 1016, 2999} {
				want := g.Insert([]byte("pre"), src[:n], start)
				wl := g.WireLen(start, n)
				buf := make([]byte, 3+wl)
				copy(buf, "pre")
				tail := 3 + wl - n
				copy(buf[tail:], src[:n])
				got := g.Insert(buf[:3], buf[tail:], start)
				if !bytes.Equal(got, want) || (len(got) > 0 && &got[0] != &buf[0]) {
					t.Fatalf("origin %d start %d n %d: in place differs or reallocated", origin, start, n)
				}
			}
		}
	}
}

func TestStripNoAllocs(t *testing.T) {
	g := Grid{}
	plain := make([]byte, 1460)
	wire := g.Insert(nil, plain, 100)
	dst := make([]byte, 0, len(wire))
	ms := make([]Found, 0, 8)
	if n := testing.AllocsPerRun(100, func() {
		dst, ms = g.Strip(dst[:0], wire, 100, ms[:0])
		dst = g.Insert(dst[:0], plain, 100)
		ms = g.Scan(wire, 100, ms[:0])
	}); n != 0 {
		t.Errorf("Strip+Insert allocate %v times per run, want 0", n)
	}
}

func FuzzInsertStrip(f *testing.F) {
	f.Add(uint32(0), uint32(0), []byte("hello"))
	f.Add(uint32(0), uint32(504), make([]byte, 12))
	f.Add(uint32(7), uint32(511), make([]byte, 1100))
	f.Add(uint32(1000), uint32(900), make([]byte, 700))
	f.Fuzz(func(t *testing.T, origin, start uint32, plain []byte) {
		g := Grid{Origin: uint64(origin)}
		checkRoundTrip(t, g, uint64(start), plain)
		// Strip must accept any wire octets at any offset without panicking,
		// and remove exactly the grid's octets inside the range.
		out, ms := g.Strip(nil, plain, uint64(start), nil)
		end := uint64(start) + uint64(len(plain))
		want := 0
		for off := uint64(start); off < end; off++ {
			if off < g.Origin || (off-g.Origin)%Interval >= Size {
				want++ // not one of a marker's four octets
			}
		}
		if len(out) != want {
			t.Fatalf("Strip kept %d octets, want %d", len(out), want)
		}
		for _, m := range ms {
			if m.Off < uint64(start) || m.Off+Size > end || !g.IsMarker(m.Off) {
				t.Fatalf("bad marker %+v", m)
			}
		}
		if sc := g.Scan(plain, uint64(start), nil); !slices.Equal(sc, ms) {
			t.Fatalf("Scan found %+v, Strip %+v", sc, ms)
		}
	})
}

// TestScan: Scan reports every marker that lies whole inside wire, with the
// octets found there, for every start around grid positions and lengths
// that end inside, at and after markers; Strip reports the same ones.
func TestScan(t *testing.T) {
	wire := make([]byte, 2100)
	for i := range wire {
		wire[i] = byte(i*7 + i>>8)
	}
	for _, origin := range []uint64{0, 3, 512, 1000} {
		g := Grid{Origin: origin}
		for start := uint64(0); start < 1100; start++ {
			for _, n := range []int{0, 1, 3, 4, 5, 508, 511, 512, 513, 1024, 1460, 2100} {
				var want []Found
				for o := start; o+Size <= start+uint64(n); o++ {
					if g.IsMarker(o) {
						i := o - start
						want = append(want, Found{Off: o, Rsvd: uint16(wire[i])<<8 | uint16(wire[i+1]), FPDUPtr: uint16(wire[i+2])<<8 | uint16(wire[i+3])})
					}
				}
				if got := g.Scan(wire[:n], start, nil); !slices.Equal(got, want) {
					t.Fatalf("origin %d start %d len %d: Scan %+v, want %+v", origin, start, n, got, want)
				}
				if _, ms := g.Strip(nil, wire[:n], start, nil); !slices.Equal(ms, want) {
					t.Fatalf("origin %d start %d len %d: Strip found %+v, want %+v", origin, start, n, ms, want)
				}
			}
		}
	}
}

func benchInsert(b *testing.B, n int) {
	g := Grid{}
	plain := make([]byte, n)
	dst := make([]byte, 0, g.WireLen(100, n))
	b.SetBytes(int64(n))
	b.ReportAllocs()
	for b.Loop() {
		dst = g.Insert(dst[:0], plain, 100)
	}
}

func benchStrip(b *testing.B, n int) {
	g := Grid{}
	wire := g.Insert(nil, make([]byte, n), 100)
	dst := make([]byte, 0, n)
	ms := make([]Found, 0, n/stride+2)
	b.SetBytes(int64(len(wire)))
	b.ReportAllocs()
	for b.Loop() {
		dst, ms = g.Strip(dst[:0], wire, 100, ms[:0])
	}
}

func BenchmarkInsert1460(b *testing.B) { benchInsert(b, 1460) }
func BenchmarkInsert64K(b *testing.B)  { benchInsert(b, 64<<10) }
func BenchmarkStrip1460(b *testing.B)  { benchStrip(b, 1460) }
func BenchmarkStrip64K(b *testing.B)   { benchStrip(b, 64<<10) }
