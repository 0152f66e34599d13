package flows

import (
	"errors"
	"math/rand/v2"
	"net/netip"
	"reflect"
	"testing"
	"time"
	"unsafe"

	"github.com/iwarpkit/iwarpkit/dissect"
	"github.com/iwarpkit/iwarpkit/dissect/rdmap"
	"github.com/iwarpkit/iwarpkit/internal/varpack"
)

// fillRandom sets every field v holds (structs, arrays, integers, bools)
// to random values, leaving pointers, slices, interfaces and strings
// alone: a field added to FPDURecord or rdmap.Segment gets a value here,
// and fails TestHeldRoundTrip until appendHeld packs it (or canHold
// refuses records that have it).
func fillRandom(v reflect.Value, rng *rand.Rand) {
	switch v.Kind() {
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() || v.Type() == reflect.TypeFor[netip.AddrPort]() {
			return
		}
		for i := 0; i < v.NumField(); i++ {
			fv := v.Field(i)
			// Unexported fields too (Record.order, pkt, flushed).
			fillRandom(reflect.NewAt(fv.Type(), unsafe.Pointer(fv.UnsafeAddr())).Elem(), rng)
		}
	case reflect.Array:
		for i := 0; i < v.Len(); i++ {
			fillRandom(v.Index(i), rng)
		}
	case reflect.Bool:
		v.SetBool(rng.IntN(2) == 1)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(rng.Int64() >> (64 - v.Type().Bits() + rng.IntN(v.Type().Bits())))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		v.SetUint(rng.Uint64() >> (64 - v.Type().Bits() + rng.IntN(v.Type().Bits())))
	}
}

// heldRecord returns an FPDU record in a box with every field appendHeld
// packs set at random.
func heldRecord(rng *rand.Rand) *fpduBox {
	b := &fpduBox{}
	r, f := &b.r, &b.f
	fillRandom(reflect.ValueOf(r).Elem(), rng)
	fillRandom(reflect.ValueOf(f).Elem(), rng)
	r.Type, r.box, r.FPDU = RecFPDU, boxFPDU, f
	// Not packed: the TCP stream is set as a record is emitted, after it
	// is unpacked, and ext is a recNewID's.
	r.stream, r.ext = 0, false
	if rng.IntN(4) > 0 {
		r.TS = time.Unix(rng.Int64N(1<<40)-1<<39, rng.Int64N(1e9)).UTC()
	}
	addrs := []netip.AddrPort{{}, netip.MustParseAddrPort("10.0.0.1:4791"), netip.MustParseAddrPort("[2001:db8::7]:65535")}
	r.Src, r.Dst = addrs[rng.IntN(3)], addrs[rng.IntN(3)]
	f.Seg.Term, f.Seg.AtomicReq, f.Seg.AtomicResp, f.Seg.HdrCut = rdmap.Terminate{}, rdmap.AtomicRequest{}, rdmap.AtomicResponse{}, 0
	switch rng.IntN(3) {
	case 1:
		f.Frames = b.frames[:0]
	case 2:
		for i := rng.IntN(40); i >= 0; i-- {
			f.Frames = append(f.Frames, rng.Uint64()>>rng.IntN(64))
		}
	}
	switch rng.IntN(3) {
	case 1:
		f.Markers = b.markers[:0]
	case 2:
		for i := rng.IntN(9); i >= 0; i-- {
			f.Markers = append(f.Markers, Marker{Seq: rng.Uint32(), FPDUPtr: uint16(rng.Uint32()), Rsvd: uint16(rng.Uint32()), OK: rng.IntN(2) == 0})
		}
	}
	n := rng.IntN(PreviewLen + 2)
	if n > 0 {
		f.Preview = f.previewBuf[:n-1]
	}
	// As emitFPDU leaves it: zero past the preview.
	clear(f.previewBuf[max(n-1, 0):])
	return b
}

// TestHeldRoundTrip: a record packed by appendHeld comes back from
// readHeld equal, field by field (reflect.DeepEqual, nil and empty slices
// told apart); what canHold refuses is refused; octets cut short give
// ErrCut and no panic.
func TestHeldRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 5000; i++ {
		b := heldRecord(rng)
		if !canHold(&b.r) {
			t.Fatalf("record %d: canHold false: %+v", i, b.f)
		}
		p := appendHeld(nil, &b.r)
		got, err := readHeld(p, &fpduBox{})
		if err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		if !reflect.DeepEqual(got, &b.r) {
			t.Fatalf("record %d:\n got %+v\n%+v\nwant %+v\n%+v", i, *got, *got.FPDU, b.r, b.f)
		}
		if i%50 == 0 {
			for n := 0; n < len(p); n++ {
				if _, err := readHeld(p[:n], &fpduBox{}); !errors.Is(err, varpack.ErrCut) {
					t.Fatalf("record %d cut to %d of %d octets: error %v", i, n, len(p), err)
				}
			}
		}
	}
	for name, spoil := range map[string]func(b *fpduBox){
		"terminate":      func(b *fpduBox) { b.f.Seg.Term.Code = 1 },
		"atomic request": func(b *fpduBox) { b.f.Seg.AtomicReq.ReqID = 1 },
		"atomic reply":   func(b *fpduBox) { b.f.Seg.AtomicResp.ReqID = 1 },
		"header cut":     func(b *fpduBox) { b.f.Seg.HdrCut = 4 },
		"findings":       func(b *fpduBox) { b.f.Findings = []dissect.Finding{{Code: "x"}} },
		"segment error":  func(b *fpduBox) { b.f.SegErr = dissect.ErrTruncated },
		"payload":        func(b *fpduBox) { b.f.Seg.Payload = []byte{1} },
		"own preview":    func(b *fpduBox) { b.f.Preview = []byte{1} },
		"zone":           func(b *fpduBox) { b.r.Src = netip.AddrPortFrom(netip.MustParseAddr("fe80::1%eth0"), 1) },
		"local time":     func(b *fpduBox) { b.r.TS = time.Unix(1, 0).In(time.FixedZone("x", 3600)) },
		"message":        func(b *fpduBox) { b.r.Message = &MessageRecord{} },
		"not boxed":      func(b *fpduBox) { b.r.box = boxNone },
		"other FPDU":     func(b *fpduBox) { b.r.FPDU = &FPDURecord{} },
		"local":          func(b *fpduBox) { b.r.local = 1 },
	} {
		b := heldRecord(rng)
		spoil(b)
		if canHold(&b.r) {
			t.Errorf("%s: canHold true", name)
		}
	}
}

// TestHeldPackBlocks: records packed and unpacked in any order come back
// whole; emptied blocks are reused, and past heldMaxBlocks nothing more is
// packed.
func TestHeldPackBlocks(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	dropped := 0
	hp := newHeldPack(func() *fpduBox { return &fpduBox{} }, func(*fpduBox) { dropped++ })
	type held struct {
		ref  uint64
		want *fpduBox
	}
	var live []held
	refused, packed := 0, 0
	for i := 0; i < 200000; i++ {
		if rng.IntN(100) < 60 || len(live) == 0 {
			b := heldRecord(rng)
			want := *b
			want.r.FPDU = &want.f
			ref, ok := hp.pack(&b.r)
			if !ok {
				refused++
				continue
			}
			packed++
			live = append(live, held{ref, &want})
			continue
		}
		k := 0
		if rng.IntN(8) == 0 {
			k = rng.IntN(len(live)) // mostly in order, some not
		}
		h := live[k]
		live = append(live[:k], live[k+1:]...)
		got := hp.unpack(h.ref)
		want := &h.want.r
		if !reflect.DeepEqual(got, want) {
			gv, wv := reflect.ValueOf(*got.FPDU), reflect.ValueOf(*want.FPDU)
			for j := 0; j < gv.NumField(); j++ {
				if g, w := reflect.NewAt(gv.Field(j).Type(), unsafe.Pointer(reflect.ValueOf(got.FPDU).Elem().Field(j).UnsafeAddr())).Elem().Interface(),
					reflect.NewAt(wv.Field(j).Type(), unsafe.Pointer(reflect.ValueOf(want.FPDU).Elem().Field(j).UnsafeAddr())).Elem().Interface(); !reflect.DeepEqual(g, w) {
					t.Errorf("unpack %d: %s: got %+v, want %+v", i, gv.Type().Field(j).Name, g, w)
				}
			}
			t.Fatalf("unpack %d: got %+v, want %+v", i, *got, *want)
		}
		if hp.inUse > heldMaxBlocks {
			t.Fatalf("%d blocks in use", hp.inUse)
		}
	}
	if dropped != packed {
		t.Errorf("%d records packed, %d boxes dropped", packed, dropped)
	}
	atEnd := len(live)
	for _, h := range live {
		hp.unpack(h.ref)
	}
	if hp.inUse > 1 || len(hp.spare) > 2 {
		t.Errorf("all unpacked: %d blocks in use, %d spare", hp.inUse, len(hp.spare))
	}
	if refused == 0 {
		t.Errorf("%d records held at the end, none refused", atEnd)
	}
}

// FuzzReadHeld: readHeld never panics on any octets, and what it reads
// back whole packs and reads back the same.
func FuzzReadHeld(f *testing.F) {
	rng := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < 8; i++ {
		f.Add(appendHeld(nil, &heldRecord(rng).r))
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		r, err := readHeld(p, &fpduBox{})
		if err != nil {
			return
		}
		if !canHold(r) {
			t.Fatalf("a record read back cannot be packed: %+v", *r.FPDU)
		}
		again, err := readHeld(appendHeld(nil, r), &fpduBox{})
		if err != nil || !reflect.DeepEqual(again, r) {
			t.Fatalf("packed again: %v\n got %+v\nwant %+v", err, *again.FPDU, *r.FPDU)
		}
	})
}
