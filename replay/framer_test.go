package replay

import (
	"bytes"
	"encoding/hex"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/iwarpkit/iwarpkit/dissect"
	"github.com/iwarpkit/iwarpkit/dissect/mpa"
	"github.com/iwarpkit/iwarpkit/markers"
)

func unhex(s string) []byte {
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		panic(err)
	}
	return b
}

// TestFramerVector checks the encoder against PROTOCOL.md G.3: an untagged
// Send of "hello" (L=1, QN 0, MSN 1, MO 0), no marker, CRC on.
func TestFramerVector(t *testing.T) {
	ulpdu := unhex("41 43 00000000 00000000 00000001 00000000 68656c6c6f")
	want := unhex("0017 4143 00000000 00000000 00000001 00000000 68656c6c6f 000000 b990b10c")
	f := NewFramer(20, false, true)
	got, err := f.AppendFPDU(nil, ulpdu)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("FPDU\n got %x\nwant %x", got, want)
	}
	if f.Off != 20+32 {
		t.Errorf("Off %d, want 52", f.Off)
	}
	d := NewDeframer(20, false, true)
	p, n, err := d.Next(got)
	if err != nil || n != 32 || !bytes.Equal(p.ULPDU, ulpdu) {
		t.Errorf("Deframer: %x %d %v", p.ULPDU, n, err)
	}
}

// TestFramerMarkers checks marker placement and the CRC over a stream of
// FPDUs: every 512 octets from the grid origin (the first FPDU octet,
// RFC 5044 §5.1) there is a marker whose FPDUPTR points back to its FPDU's
// start, and the CRC covers the markers (PROTOCOL.md A.4).
func TestFramerMarkers(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, origin := range []uint64{0, 20, 24, 45} {
		f := NewFramer(origin, true, true)
		d := NewDeframer(origin, true, true)
		var stream []byte
		var ulpdus [][]byte
		var starts []uint64
		for range 200 {
			u := make([]byte, r.IntN(1500))
			for i := range u {
				u[i] = byte(r.Uint32())
			}
			ulpdus = append(ulpdus, u)
			starts = append(starts, f.Off)
			var err error
			stream, err = f.AppendFPDU(stream, u)
			if err != nil {
				t.Fatal(err)
			}
		}
		// Independent check: each grid position holds 0x0000 and the
		// distance back to the start of the FPDU it lies in.
		g := markers.Grid{Origin: origin}
		fi := 0
		for p := origin; p < origin+uint64(len(stream)); p += markers.Interval {
			for fi+1 < len(starts) && starts[fi+1] <= p {
				fi++
			}
			i := p - origin
			m := stream[i : i+4]
			if m[0] != 0 || m[1] != 0 || uint64(m[2])<<8|uint64(m[3]) != p-starts[fi] {
				t.Fatalf("origin %d: marker at %d reads %x, want FPDUPTR %d", origin, p, m, p-starts[fi])
			}
		}
		// Each FPDU's CRC is over its wire octets, markers included.
		for k, s := range starts {
			end := origin + uint64(len(stream))
			if k+1 < len(starts) {
				end = starts[k+1]
			}
			w := stream[s-origin : end-origin]
			crc := uint32(w[len(w)-4]) | uint32(w[len(w)-3])<<8 | uint32(w[len(w)-2])<<16 | uint32(w[len(w)-1])<<24
			if crc != mpa.CRC32C(w[:len(w)-4]) {
				t.Fatalf("FPDU %d: CRC does not cover the wire octets", k)
			}
			if g.Count(s, end) > 0 {
				plain, _ := g.Strip(nil, w, s, nil)
				if crc == mpa.CRC32C(plain[:len(plain)-4]) {
					t.Fatalf("FPDU %d: CRC computed without its markers", k)
				}
			}
		}
		// The Deframer reads them all back, fed in random slices.
		buf := stream
		var pending []byte
		k := 0
		for len(buf) > 0 || len(pending) > 0 {
			if len(buf) > 0 {
				n := min(len(buf), 1+r.IntN(700))
				pending = append(pending, buf[:n]...)
				buf = buf[n:]
			}
			for {
				p, n, err := d.Next(pending)
				if err != nil {
					t.Fatalf("FPDU %d: %v", k, err)
				}
				if n == 0 {
					break
				}
				if !bytes.Equal(p.ULPDU, ulpdus[k]) {
					t.Fatalf("FPDU %d: ULPDU differs", k)
				}
				pending = pending[n:]
				k++
			}
			if len(buf) == 0 && len(pending) > 0 && k == len(ulpdus) {
				t.Fatalf("%d octets left", len(pending))
			}
			if len(buf) == 0 && k == len(ulpdus) {
				break
			}
		}
		if k != len(ulpdus) {
			t.Fatalf("origin %d: read %d of %d FPDUs", origin, k, len(ulpdus))
		}
	}
}

// TestDeframerErrors: a wrong CRC and a wrong marker are reported with the
// dissect sentinels, and the Deframer moves past the FPDU.
func TestDeframerErrors(t *testing.T) {
	f := NewFramer(0, true, true)
	w, _ := f.AppendFPDU(nil, bytes.Repeat([]byte{1}, 40))
	w, _ = f.AppendFPDU(w, bytes.Repeat([]byte{2}, 40))
	bad := bytes.Clone(w)
	bad[20] ^= 1
	d := NewDeframer(0, true, true)
	if _, n, err := d.Next(bad); !errors.Is(err, dissect.ErrBadCRC) || n != 52 {
		t.Errorf("bad CRC: n %d err %v", n, err)
	}
	if p, _, err := d.Next(bad[52:]); err != nil || p.ULPDU[0] != 2 {
		t.Errorf("after a bad FPDU: %v", err)
	}
	bad = bytes.Clone(w)
	bad[3] = 4
	d = NewDeframer(0, true, false)
	if _, _, err := d.Next(bad); !errors.Is(err, dissect.ErrMarkerMismatch) {
		t.Errorf("bad marker: %v", err)
	}
	if _, err := f.AppendFPDU(nil, make([]byte, mpa.MaxULPDULen+1)); !errors.Is(err, dissect.ErrBadLength) {
		t.Errorf("oversized ULPDU: %v", err)
	}
}

// TestFramerNoAllocs: framing and deframing allocate nothing once their
// buffers have grown.
func TestFramerNoAllocs(t *testing.T) {
	u := bytes.Repeat([]byte{7}, 1400)
	f := NewFramer(20, true, true)
	d := NewDeframer(20, true, true)
	dst := make([]byte, 0, 4096)
	var err error
	dst, _ = f.AppendFPDU(dst[:0], u)
	d.Next(dst)
	allocs := testing.AllocsPerRun(200, func() {
		dst, err = f.AppendFPDU(dst[:0], u)
		if _, _, err := d.Next(dst); err != nil {
			panic(err)
		}
	})
	if err != nil || allocs != 0 {
		t.Errorf("%v allocations per FPDU (err %v)", allocs, err)
	}
}

func BenchmarkFramer(b *testing.B) {
	for _, m := range []bool{false, true} {
		name := "plain"
		if m {
			name = "markers"
		}
		b.Run(name, func(b *testing.B) {
			u := bytes.Repeat([]byte{7}, 1424)
			f := NewFramer(20, m, true)
			dst := make([]byte, 0, 4096)
			b.SetBytes(int64(len(u)))
			b.ReportAllocs()
			for b.Loop() {
				dst, _ = f.AppendFPDU(dst[:0], u)
			}
		})
	}
}

func BenchmarkDeframer(b *testing.B) {
	for _, m := range []bool{false, true} {
		name := "plain"
		if m {
			name = "markers"
		}
		b.Run(name, func(b *testing.B) {
			u := bytes.Repeat([]byte{7}, 1424)
			f := NewFramer(20, m, true)
			var stream []byte
			var starts []uint64
			for range 64 {
				starts = append(starts, f.Off)
				stream, _ = f.AppendFPDU(stream, u)
			}
			d := NewDeframer(20, m, true)
			b.SetBytes(int64(len(u)))
			b.ReportAllocs()
			i, off := 0, 0
			for b.Loop() {
				if i == len(starts) {
					i, off = 0, 0
					d.Off = 20
				}
				_, n, err := d.Next(stream[off:])
				if err != nil || n == 0 {
					b.Fatal(err, n)
				}
				off += n
				i++
			}
		})
	}
}

// FuzzDeframer feeds arbitrary octets to the Deframer (no panic, progress
// bounded by the input) and checks that framing arbitrary ULPDUs reads
// back unchanged.
func FuzzDeframer(f *testing.F) {
	f.Add([]byte("hello"), uint16(20), true, true)
	f.Add([]byte{}, uint16(0), false, false)
	f.Add(bytes.Repeat([]byte{0xff}, 700), uint16(511), true, false)
	f.Fuzz(func(t *testing.T, data []byte, origin uint16, m, crc bool) {
		d := NewDeframer(uint64(origin), m, crc)
		rest := data
		for len(rest) > 0 {
			_, n, err := d.Next(rest)
			if n == 0 {
				if err != nil {
					t.Fatalf("error without progress: %v", err)
				}
				break
			}
			if n > len(rest) {
				t.Fatalf("consumed %d of %d", n, len(rest))
			}
			rest = rest[n:]
		}
		if len(data) > mpa.MaxULPDULen {
			return
		}
		fr := NewFramer(uint64(origin), m, crc)
		w, err := fr.AppendFPDU(nil, data)
		if err != nil {
			t.Fatal(err)
		}
		d = NewDeframer(uint64(origin), m, crc)
		p, n, err := d.Next(w)
		if err != nil || n != len(w) || !bytes.Equal(p.ULPDU, data) {
			t.Fatalf("round trip: n %d of %d, err %v", n, len(w), err)
		}
	})
}
