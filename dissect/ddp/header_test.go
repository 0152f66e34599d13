package ddp

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/iwarpkit/iwarpkit/dissect"
)

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Vectors: the first DDP header octets of real siw ULPDUs, with the values
// tshark 4.0 shows for them (captures in /work/shared/captures, frames
// named below), plus PROTOCOL.md G.3.
var decodeTests = []struct {
	name string
	in   string
	want Header
	n    int
}{
	{
		// PROTOCOL.md G.3: Send, L=1, QN 0, MSN 1, MO 0, payload "hello".
		name: "G.3 send hello",
		in:   "41 43 00000000 00000000 00000001 00000000 68656c6c6f",
		want: Header{L: true, DV: 1, ULPCtrl: 0x43, MSN: 1},
		n:    UntaggedHeaderLen,
	},
	{
		// basic_rping_v2_nocrc frame 9: RDMA Read Request, QN 1, MSN 1, MO 0.
		name: "rping read request",
		in:   "41 41 00000000 00000001 00000001 00000000 b069b300",
		want: Header{L: true, DV: 1, ULPCtrl: 0x41, QN: 1, MSN: 1},
		n:    UntaggedHeaderLen,
	},
	{
		// basic_rping_v2_nocrc frame 10: RDMA Read Response, STag
		// 0xb069b300, TO 0x0000559cab83b550.
		name: "rping read response",
		in:   "c1 42 b069b300 0000559cab83b550 72646d61",
		want: Header{T: true, L: true, DV: 1, ULPCtrl: 0x42, STag: 0xb069b300, TO: 0x0000559cab83b550},
		n:    TaggedHeaderLen,
	},
	{
		// basic_rping_v2_nocrc frame 13: RDMA Write, STag 0x4d93c500,
		// TO 0x00005588df645ed0.
		name: "rping write",
		in:   "c1 40 4d93c500 00005588df645ed0",
		want: Header{T: true, L: true, DV: 1, ULPCtrl: 0x40, STag: 0x4d93c500, TO: 0x00005588df645ed0},
		n:    TaggedHeaderLen,
	},
	{
		// term_badwrite frame 11: the Terminate's own header (tshark:
		// RsvdULP 4700000000, QN 2, MSN 1, MO 0).
		name: "siw terminate",
		in:   "41 47 00000000 00000002 00000001 00000000 11000300",
		want: Header{L: true, DV: 1, ULPCtrl: 0x47, QN: 2, MSN: 1},
		n:    UntaggedHeaderLen,
	},
	{
		// term_toolong frame 16: the terminated Send segment (not last,
		// MO 2848).
		name: "siw terminated send, middle segment",
		in:   "01 43 00000000 00000000 00000001 00000b20",
		want: Header{DV: 1, ULPCtrl: 0x43, MSN: 1, MO: 2848},
		n:    UntaggedHeaderLen,
	},
	{
		// Every bit set: reserved bits, DV 3, invalidate STag.
		name: "all ones untagged",
		in:   "7f ff ffffffff ffffffff ffffffff ffffffff",
		want: Header{L: true, Rsvd: 0xF, DV: 3, ULPCtrl: 0xFF, ULPRsvd: 0xFFFFFFFF, QN: 0xFFFFFFFF, MSN: 0xFFFFFFFF, MO: 0xFFFFFFFF},
		n:    UntaggedHeaderLen,
	},
	{
		name: "RDMAC version 0, tagged",
		in:   "80 00 00000001 0000000000000000",
		want: Header{T: true, ULPCtrl: 0, STag: 1},
		n:    TaggedHeaderLen,
	},
}

func TestDecode(t *testing.T) {
	for _, tt := range decodeTests {
		t.Run(tt.name, func(t *testing.T) {
			in := unhex(t, tt.in)
			h, n, err := Decode(in)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if h != tt.want || n != tt.n {
				t.Fatalf("Decode = %+v, %d; want %+v, %d", h, n, tt.want, tt.n)
			}
			if h.Len() != n {
				t.Errorf("Len() = %d, want %d", h.Len(), n)
			}
			if got := Append(nil, h); !bytes.Equal(got, in[:n]) {
				t.Errorf("Append = %x, want %x", got, in[:n])
			}
			into := dirty
			if n, err := DecodeInto(&into, in); err != nil || into != tt.want || n != tt.n {
				t.Errorf("DecodeInto over %+v = %+v, %d, %v; want %+v, %d", dirty, into, n, err, tt.want, tt.n)
			}
		})
	}
}

// dirty has every field set: DecodeInto must leave none of it.
var dirty = Header{T: true, L: true, Rsvd: 0xF, DV: 3, ULPCtrl: 0xFF, STag: 0xFFFFFFFF, TO: 0xFFFFFFFFFFFFFFFF,
	ULPRsvd: 0xFFFFFFFF, QN: 0xFFFFFFFF, MSN: 0xFFFFFFFF, MO: 0xFFFFFFFF}

func TestDecodeTruncated(t *testing.T) {
	tagged := unhex(t, "c1 40 4d93c500 00005588df645ed0")
	untagged := unhex(t, "41 43 00000000 00000000 00000001 00000000")
	for _, b := range [][]byte{nil, {}, tagged[:1], tagged[:13], untagged[:14], untagged[:17]} {
		h, n, err := Decode(b)
		if !errors.Is(err, dissect.ErrTruncated) || err != dissect.ErrTruncated {
			t.Errorf("Decode(%x) err = %v, want the bare ErrTruncated", b, err)
		}
		if h != (Header{}) || n != 0 {
			t.Errorf("Decode(%x) = %+v, %d; want zero values on error", b, h, n)
		}
		into := dirty
		if n, err := DecodeInto(&into, b); err != dissect.ErrTruncated || into != (Header{}) || n != 0 {
			t.Errorf("DecodeInto(%x) = %+v, %d, %v; want a zero Header, 0 and ErrTruncated", b, into, n, err)
		}
	}
}

func TestRoundTrip(t *testing.T) {
	hs := []Header{
		{},
		{T: true},
		{T: true, L: true, Rsvd: 0xA, DV: 2, ULPCtrl: 0x5A, STag: 0xDEADBEEF, TO: 0x0123456789ABCDEF},
		{L: true, Rsvd: 0x5, DV: 1, ULPCtrl: 0x46, ULPRsvd: 0xCAFEF00D, QN: 3, MSN: 0xFFFFFFFF, MO: 0x80000000},
	}
	for _, h := range hs {
		b := Append(nil, h)
		if len(b) != h.Len() {
			t.Errorf("Append(%+v) wrote %d octets, want %d", h, len(b), h.Len())
		}
		got, n, err := Decode(b)
		if err != nil || got != h || n != len(b) {
			t.Errorf("Decode(Append(%+v)) = %+v, %d, %v", h, got, n, err)
		}
	}
}

func TestAppendIgnoresOtherModel(t *testing.T) {
	// Fields of the other buffer model are not written.
	h := Header{T: true, STag: 1, TO: 2, ULPRsvd: 3, QN: 4, MSN: 5, MO: 6}
	got, _, _ := Decode(Append(nil, h))
	if want := (Header{T: true, STag: 1, TO: 2}); got != want {
		t.Errorf("tagged: got %+v, want %+v", got, want)
	}
	h.T = false
	got, _, _ = Decode(Append(nil, h))
	if want := (Header{ULPRsvd: 3, QN: 4, MSN: 5, MO: 6}); got != want {
		t.Errorf("untagged: got %+v, want %+v", got, want)
	}
}

func TestAppendMasks(t *testing.T) {
	b := Append(nil, Header{Rsvd: 0xFF, DV: 0xFF})
	if b[0] != 0x3F {
		t.Errorf("ctrl = %#x, want 0x3f (Rsvd and DV masked)", b[0])
	}
}

func TestHeaderLen(t *testing.T) {
	for c := 0; c < 256; c++ {
		want := UntaggedHeaderLen
		if c&0x80 != 0 {
			want = TaggedHeaderLen
		}
		if got := HeaderLen(uint8(c)); got != want {
			t.Fatalf("HeaderLen(%#x) = %d, want %d", c, got, want)
		}
	}
}

func TestDecodeNoAllocs(t *testing.T) {
	b := unhex(t, "41 43 00000000 00000000 00000001 00000000 68656c6c6f")
	tb := unhex(t, "c1 40 4d93c500 00005588df645ed0")
	allocs := testing.AllocsPerRun(1000, func() {
		_, _, _ = Decode(b)
		_, _, _ = Decode(tb)
		_, _, _ = Decode(b[:3])
		var h Header
		_, _ = DecodeInto(&h, tb)
	})
	if allocs != 0 {
		t.Errorf("Decode allocates %v times per run, want 0", allocs)
	}
}

func FuzzDDPDecode(f *testing.F) {
	for _, tt := range decodeTests {
		f.Add(unhex(f, tt.in))
	}
	f.Add([]byte{})
	f.Add([]byte{0x80})
	f.Fuzz(func(t *testing.T, b []byte) {
		h, n, err := Decode(b)
		into := dirty
		if n2, err2 := DecodeInto(&into, b); into != h || n2 != n || err2 != err {
			t.Fatalf("DecodeInto = %+v, %d, %v; Decode = %+v, %d, %v", into, n2, err2, h, n, err)
		}
		if err != nil {
			if h != (Header{}) || n != 0 {
				t.Fatalf("error %v with non-zero result %+v, %d", err, h, n)
			}
			return
		}
		if n != h.Len() || n > len(b) {
			t.Fatalf("n = %d, Len = %d, len(b) = %d", n, h.Len(), len(b))
		}
		enc := Append(nil, h)
		if !bytes.Equal(enc, b[:n]) {
			t.Fatalf("Append(Decode(%x)) = %x", b[:n], enc)
		}
		h2, n2, err := Decode(enc)
		if err != nil || h2 != h || n2 != n {
			t.Fatalf("second decode = %+v, %d, %v; want %+v, %d", h2, n2, err, h, n)
		}
	})
}

func BenchmarkDecode(b *testing.B) {
	for _, bc := range []struct{ name, in string }{
		{"tagged", "c1 40 4d93c500 00005588df645ed0"},
		{"untagged", "41 43 00000000 00000000 00000001 00000000"},
	} {
		in := unhex(b, bc.in)
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				_, _, _ = Decode(in)
			}
		})
	}
}
