package mpa

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/iwarpkit/iwarpkit/dissect"
	"github.com/iwarpkit/iwarpkit/markers"
)

// refCRC32C is a bitwise CRC-32C (reflected polynomial 0x82F63B78, initial
// value and final XOR all ones: PROTOCOL.md A.5), independent of
// hash/crc32. TestRefCRC32C checks it against the PROTOCOL.md G.1 vectors.
func refCRC32C(b []byte) uint32 {
	c := ^uint32(0)
	for _, x := range b {
		c ^= uint32(x)
		for range 8 {
			if c&1 != 0 {
				c = c>>1 ^ 0x82F63B78
			} else {
				c >>= 1
			}
		}
	}
	return ^c
}

// refWireFPDU is a slow reference encoder for Framing.AppendFPDU that walks
// stream space octet by octet (RFC 5044 §4.1, §4.4, §5.1; PROTOCOL.md A.3,
// A.4, A.6), sharing no code with it: before every plain octet that falls
// on the grid it writes a marker (Rsvd 0, FPDUPTR = distance from start);
// the CRC covers every wire octet before the CRC field's first octet.
func refWireFPDU(ulpdu []byte, origin, start uint64, markersOn, crcOn bool) []byte {
	plain := []byte{byte(len(ulpdu) >> 8), byte(len(ulpdu))}
	plain = append(plain, ulpdu...)
	for len(plain)%4 != 0 {
		plain = append(plain, 0)
	}
	crcFrom := len(plain) // plain index of the CRC field
	plain = append(plain, 0, 0, 0, 0)
	var wire []byte
	var crcAt []int // wire index of each CRC octet
	for i := 0; i < len(plain); {
		p := start + uint64(len(wire))
		if markersOn && p >= origin && (p-origin)%512 == 0 {
			d := p - start
			wire = append(wire, 0, 0, byte(d>>8), byte(d))
			continue
		}
		if i >= crcFrom {
			crcAt = append(crcAt, len(wire))
		}
		wire = append(wire, plain[i])
		i++
	}
	var crc uint32
	if crcOn {
		crc = refCRC32C(wire[:crcAt[0]])
	}
	for k, at := range crcAt {
		wire[at] = byte(crc >> (8 * k))
	}
	return wire
}

// PROTOCOL.md G.1: the reference CRC agrees with the published vectors.
func TestRefCRC32C(t *testing.T) {
	seq := make([]byte, 32)
	rev := make([]byte, 32)
	for i := range seq {
		seq[i], rev[i] = byte(i), byte(31-i)
	}
	for _, tt := range []struct {
		in   []byte
		want uint32
	}{
		{make([]byte, 32), 0x8A9136AA},
		{bytes.Repeat([]byte{0xff}, 32), 0x62A8AB43},
		{seq, 0x46DD794E},
		{rev, 0x113FDB5C},
		{[]byte("123456789"), 0xE3069283},
	} {
		if got := refCRC32C(tt.in); got != tt.want {
			t.Errorf("refCRC32C(% x) = %#08x, want %#08x", tt.in, got, tt.want)
		}
	}
}

// sampleFPDU is the PROTOCOL.md G.3 FPDU: an untagged Send carrying
// "hello", no marker, CRC-32C 0x0CB190B9 least significant octet first.
const sampleFPDU = `00 17  41 43  00 00 00 00  00 00 00 00  00 00 00 01  00 00 00 00
	68 65 6c 6c 6f  00 00 00  b9 90 b1 0c`

// TestFramingVectors places the G.3 FPDU at chosen points of the grid and
// checks the wire octets against what RFC 5044 §4.1, §4.4 and §5.1 make of
// it: the G.3 octets, the markers the grid puts among them, and the CRC
// from the reference over the octets before the CRC field.
func TestFramingVectors(t *testing.T) {
	g3 := unhex(t, sampleFPDU)
	ulpdu := g3[2:25]
	body := g3[:28] // ULPDU_Length, ULPDU, PAD
	le := func(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	marker := func(ptr uint16) []byte { return []byte{0, 0, byte(ptr >> 8), byte(ptr)} }
	withCRC := func(covered []byte) []byte { return cat(covered, le(refCRC32C(covered))) }

	tests := []struct {
		name          string
		m, crc        bool
		origin, start uint64
		want          []byte
	}{
		{"G.3 no markers", false, true, 0, 20, g3},
		{"G.3 no markers, no CRC", false, false, 0, 20, cat(body, le(0))},
		{"markers off ignore the grid", false, true, 0, 0, g3},
		{"leading marker FPDUPTR 0, covered by the CRC", true, true, 20, 20,
			withCRC(cat(marker(0), body))},
		{"leading marker, no CRC", true, false, 20, 20, cat(marker(0), body, le(0))},
		{"no grid point inside", true, true, 20, 24, g3},
		{"marker splits ULPDU_Length (FPDUPTR 1)", true, true, 0, 511,
			withCRC(cat(g3[:1], marker(1), g3[1:28]))},
		{"marker between PAD and CRC (FPDUPTR 28)", true, true, 0, 512 - 28,
			withCRC(cat(body, marker(28)))},
		{"marker due after the CRC belongs to the next FPDU", true, true, 0, 512 - 32, g3},
		// Unaligned on the grid (origin at the stream start, PROTOCOL.md
		// A.6's RDMAC fallback): the marker falls inside the CRC field and
		// the CRC covers only what precedes the field.
		{"marker inside the CRC field (FPDUPTR 29)", true, true, 0, 512 - 29,
			cat(body, g3[28:29], marker(29), g3[29:32])},
		{"second grid period", true, true, 100, 100 + 2*512 + 4, g3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := Framing{Markers: tt.m, CRC: tt.crc, Grid: markers.Grid{Origin: tt.origin}}
			prefix := []byte("prefix")
			got, err := f.AppendFPDU(bytes.Clone(prefix), ulpdu, tt.start)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got[:len(prefix)], prefix) {
				t.Fatalf("prefix overwritten: % x", got[:len(prefix)])
			}
			wire := got[len(prefix):]
			if !bytes.Equal(wire, tt.want) {
				t.Fatalf("AppendFPDU =\n% x\nwant\n% x", wire, tt.want)
			}
			if n := f.WireLen(tt.start, len(ulpdu)); n != len(tt.want) {
				t.Errorf("WireLen = %d, want %d", n, len(tt.want))
			}
			if ref := refWireFPDU(ulpdu, tt.origin, tt.start, tt.m, tt.crc); !bytes.Equal(ref, tt.want) {
				t.Errorf("reference encoder disagrees:\n% x", ref)
			}
			checkDecode(t, f, wire, ulpdu, tt.start)
		})
	}
}

// checkDecode reads wire back the way a receiver does (markers.Grid.Strip,
// markers.CheckPtr, DecodeFPDU; RFC 5044 §4.1, §4.4, §5.1) and checks that
// it holds ulpdu with zero PAD, valid markers and the right CRC field.
func checkDecode(t *testing.T, f Framing, wire, ulpdu []byte, start uint64) {
	t.Helper()
	plain := wire
	if f.Markers {
		var found []markers.Found
		plain, found = f.Grid.Strip(nil, wire, start, nil)
		if want := f.Grid.Count(start, start+uint64(len(wire))); len(found) != want {
			t.Fatalf("%d markers on the wire, the grid has %d", len(found), want)
		}
		for _, m := range found {
			if m.Off-start <= 0xFFFF && !markers.CheckPtr(m, start) {
				t.Fatalf("marker %+v does not point at the FPDU at %d", m, start)
			}
		}
	}
	p, n, err := DecodeFPDU(plain)
	if err != nil || n != len(plain) || !bytes.Equal(p.ULPDU, ulpdu) || !p.PadZero() {
		t.Fatalf("DecodeFPDU = %+v, n %d of %d, %v", p, n, len(plain), err)
	}
	at := f.CRCOffsets(start, len(ulpdu))
	var want uint32
	if f.CRC {
		want = refCRC32C(wire[:at[0]])
	}
	if p.CRC != want {
		t.Fatalf("CRC field %#08x, want %#08x", p.CRC, want)
	}
	for i, o := range at {
		if wire[o] != byte(want>>(8*i)) {
			t.Fatalf("CRCOffsets[%d] = %d holds %#02x", i, o, wire[o])
		}
	}
}

// TestFramingReference compares AppendFPDU with the slow reference encoder
// over every ULPDU size up to two marker periods, at every FPDU start in a
// grid period, aligned or not, and a few large ULPDUs.
func TestFramingReference(t *testing.T) {
	r := rand.New(rand.NewPCG(5044, 4))
	data := make([]byte, MaxULPDULen)
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	sizes := []int{4096, 16383, MaxULPDULen}
	for n := 0; n <= 1100; n++ {
		sizes = append(sizes, n)
	}
	var dst []byte
	for _, origin := range []uint64{0, 20, 23} {
		for _, m := range []bool{false, true} {
			for _, crc := range []bool{false, true} {
				f := Framing{Markers: m, CRC: crc, Grid: markers.Grid{Origin: origin}}
				for _, n := range sizes {
					start := origin + uint64(r.IntN(3*512))
					if m && (start-origin)%512 != 0 && (start-origin)%512 < 4 {
						start += 4 // not inside a marker
					}
					if n%97 == 0 {
						start = origin // the leading marker
					}
					ulpdu := data[:n]
					var err error
					dst, err = f.AppendFPDU(dst[:0], ulpdu, start)
					if err != nil {
						t.Fatal(err)
					}
					if want := refWireFPDU(ulpdu, origin, start, m, crc); !bytes.Equal(dst, want) {
						t.Fatalf("origin %d start %d markers %v crc %v size %d: differs from the reference", origin, start, m, crc, n)
					}
					checkDecode(t, f, dst, ulpdu, start)
				}
			}
		}
	}
}

// TestFramingInPlace: whatever lies in dst's spare capacity, the result is
// the same, and the octets before len(dst) stay.
func TestFramingInPlace(t *testing.T) {
	ulpdu := bytes.Repeat([]byte{0x5a}, 1500)
	f := Framing{Markers: true, CRC: true, Grid: markers.Grid{Origin: 7}}
	want := refWireFPDU(ulpdu, 7, 7+300, true, true)
	for _, fill := range []byte{0x00, 0xff, 0x5a} {
		buf := bytes.Repeat([]byte{fill}, 3+len(want)+5)
		got, err := f.AppendFPDU(buf[:3], ulpdu, 7+300)
		if err != nil {
			t.Fatal(err)
		}
		if &got[0] != &buf[0] {
			t.Fatal("AppendFPDU reallocated although dst had the capacity")
		}
		if !bytes.Equal(got[:3], []byte{fill, fill, fill}) || !bytes.Equal(got[3:], want) {
			t.Fatalf("fill %#02x: wrong wire octets", fill)
		}
	}
}

func TestFramingTooLong(t *testing.T) {
	for _, m := range []bool{false, true} {
		dst := []byte{1, 2, 3}
		got, err := Framing{Markers: m, CRC: true}.AppendFPDU(dst, make([]byte, MaxULPDULen+1), 0)
		if !errors.Is(err, dissect.ErrBadLength) || !bytes.Equal(got, dst) || len(got) != 3 {
			t.Errorf("markers %v: got % x, %v; want dst unchanged, ErrBadLength", m, got, err)
		}
	}
}

// TestFramingNoAllocs: with the capacity in dst, encoding allocates
// nothing, markers or not.
func TestFramingNoAllocs(t *testing.T) {
	ulpdu := make([]byte, 1442)
	dst := make([]byte, 0, 2048)
	for _, m := range []bool{false, true} {
		f := Framing{Markers: m, CRC: true, Grid: markers.Grid{Origin: 20}}
		start := uint64(20)
		a := testing.AllocsPerRun(100, func() {
			dst, _ = f.AppendFPDU(dst[:0], ulpdu, start)
			start += uint64(len(dst))
			sinkInt += len(f.CRCOffsets(start, len(ulpdu))) + f.WireLen(start, len(ulpdu))
		})
		if a != 0 {
			t.Errorf("markers %v: %v allocations per run, want 0", m, a)
		}
	}
}

func BenchmarkFramingAppendFPDU(b *testing.B) {
	for _, size := range []int{64, 1442, 16 << 10} {
		for _, m := range []bool{false, true} {
			b.Run(strconv.Itoa(size)+"/markers="+strconv.FormatBool(m), func(b *testing.B) {
				b.ReportAllocs()
				ulpdu := make([]byte, size)
				f := Framing{Markers: m, CRC: true, Grid: markers.Grid{Origin: 20}}
				dst := make([]byte, 0, f.WireLen(20, size)+MarkerLen)
				b.SetBytes(int64(size))
				start := uint64(20)
				for b.Loop() {
					dst, _ = f.AppendFPDU(dst[:0], ulpdu, start)
					start += uint64(len(dst))
				}
			})
		}
	}
}

// FuzzFramingAppendFPDU: encode, then decode as a receiver does, gives the
// ULPDU back with valid markers and CRC, and the octets agree with the
// slow reference encoder.
func FuzzFramingAppendFPDU(f *testing.F) {
	g3 := unhex(f, sampleFPDU)
	f.Add(g3[2:25], uint16(20), uint16(0), true, true)
	f.Add(g3[2:25], uint16(0), uint16(511), true, true)
	f.Add(g3[2:25], uint16(0), uint16(483), true, false)
	f.Add([]byte{}, uint16(0), uint16(0), false, true)
	f.Add(make([]byte, 1442), uint16(23), uint16(700), true, true)
	f.Fuzz(func(t *testing.T, ulpdu []byte, origin, delta uint16, m, crc bool) {
		start := uint64(origin) + uint64(delta)
		if d := uint64(delta) % 512; m && d != 0 && d < 4 {
			return // inside a marker: no FPDU starts there
		}
		fr := Framing{Markers: m, CRC: crc, Grid: markers.Grid{Origin: uint64(origin)}}
		wire, err := fr.AppendFPDU(nil, ulpdu, start)
		if len(ulpdu) > MaxULPDULen {
			if err != dissect.ErrBadLength || len(wire) != 0 {
				t.Fatalf("too long: % x, %v", wire, err)
			}
			return
		}
		if err != nil || len(wire) != fr.WireLen(start, len(ulpdu)) {
			t.Fatalf("%d octets (WireLen %d), %v", len(wire), fr.WireLen(start, len(ulpdu)), err)
		}
		if want := refWireFPDU(ulpdu, uint64(origin), start, m, crc); !bytes.Equal(wire, want) {
			t.Fatalf("differs from the reference:\n% x\n% x", wire, want)
		}
		checkDecode(t, fr, wire, ulpdu, start)
	})
}
