package capture_test

import (
	"bytes"
	"encoding/binary"
	"math/big"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"
	"github.com/iwarpkit/iwarpkit/capture"
)

// sameAsPcapgo reads data three times, Enhanced Packet Blocks in place
// (ngReader.readEPB) from a reader and from the file mapped
// (OpenMapped), and every block through pcapgo, and fails unless all give
// the same packets and the same end; it returns the packets read.
func sameAsPcapgo(t *testing.T, data []byte) int {
	t.Helper()
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	fast, err := capture.NewSource(bytes.NewReader(data), path)
	slow, err2 := capture.NewSource(bytes.NewReader(data), path)
	mapped, err3 := capture.OpenMapped(path)
	if (err == nil) != (err2 == nil) || (err == nil) != (err3 == nil) {
		t.Fatalf("NewSource: %v, %v; OpenMapped: %v", err, err2, err3)
	}
	if err != nil {
		return 0
	}
	defer fast.Close()
	defer slow.Close()
	defer mapped.Close()
	capture.PcapgoOnly(slow)
	var p, q, m capture.Packet
	for n := 0; ; n++ {
		err, err2, err3 := fast.NextInto(&p), slow.NextInto(&q), mapped.NextInto(&m)
		// An empty packet's octets are nil or not as it happens with
		// pcapgo (nil until its buffer is first allocated).
		for _, x := range []*capture.Packet{&p, &q, &m} {
			if len(x.Data) == 0 {
				x.Data = nil
			}
			if len(x.Payload) == 0 {
				x.Payload = nil
			}
			x.PayloadPos = 0 // a file offset of the mapped file only
		}
		if !samePacket(&p, &q) || (err == nil) != (err2 == nil) || (err != nil && err.Error() != err2.Error()) {
			t.Fatalf("packet %d: in place %+v, %v; pcapgo %+v, %v", n+1, p, err, q, err2)
		}
		if !samePacket(&m, &q) || (err3 == nil) != (err2 == nil) || (err3 != nil && err3.Error() != err2.Error()) {
			t.Fatalf("packet %d: mapped %+v, %v; pcapgo %+v, %v", n+1, m, err3, q, err2)
		}
		if err != nil {
			return n
		}
	}
}

// ngResolutions builds a pcapng file in the given byte order whose
// interfaces have the timestamp resolutions res (if_tsresol octets; 0:
// none, microseconds) and, for the last one, if_tsoffset, with packets on
// each interface at timestamps from 0 to near the top of 64 bits.
func ngResolutions(t testing.TB, order binary.ByteOrder, res []byte) []byte {
	f := newNgFile(order)
	frame := ether(t, ipv4TCP(t, []byte("resolution")))
	for i, r := range res {
		body := make([]byte, 8)
		order.PutUint16(body[0:2], uint16(layers.LinkTypeEthernet))
		if r != 0 {
			body = append(body, f.option(9, []byte{r})...)
		}
		if i == len(res)-1 {
			off := make([]byte, 8)
			order.PutUint64(off, 1700000000)
			body = append(body, f.option(14, off)...)
		}
		body = append(body, 0, 0, 0, 0)
		f.block(1, body)
	}
	for i := range res {
		for _, units := range []uint64{0, 1, 999_999, 1_000_000_007, 1<<40 + 12345, 1<<63 + 1, ^uint64(0)} {
			body := make([]byte, 20)
			order.PutUint32(body[0:4], uint32(i))
			order.PutUint32(body[4:8], uint32(units>>32))
			order.PutUint32(body[8:12], uint32(units))
			order.PutUint32(body[12:16], uint32(len(frame)))
			order.PutUint32(body[16:20], uint32(len(frame)+i))
			f.block(6, append(body, frame...))
		}
	}
	return f.bytes()
}

// TestNgInPlace: Enhanced Packet Blocks read in place give what pcapgo
// gives (timestamps of every resolution, offsets, options, lengths,
// interfaces, sections, byte orders), and every block the in-place read
// leaves to pcapgo (undescribed interface, packet longer than its block or
// than MaxRecordLength, block larger than the read buffer, truncation) ends
// the same way.
func TestNgInPlace(t *testing.T) {
	frame := ether(t, ipv4TCP(t, []byte("in place")))
	res := []byte{0, 3, 6, 9, 12, 19, 20, 63, 0x80, 0x8a, 0x9e, 0xbf}
	cases := map[string][]byte{}
	for _, order := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
		name := order.String()
		cases[name+"/resolutions"] = ngResolutions(t, order, res)

		f := newNgFile(order)
		f.idb(layers.LinkTypeEthernet, 0, 0)
		f.idb(layers.LinkTypeRaw, 96, 9)
		f.epb(0, t0, 6, uint32(len(frame)), uint32(len(frame)), frame)
		f.epbOptions(0, t0.Add(time.Second), frame)
		f.epb(1, t0, 9, 60, 1500, ipv6TCP(t, make([]byte, 100))[:60])
		f.epb(0, t0, 6, 0, 60, nil)
		f.isb(0)
		f.spb(uint32(len(frame)), frame)
		f.pb(0, t0, frame)
		f.epb(1, t0, 9, uint32(len(frame)-14), uint32(len(frame)-14), frame[14:])
		cases[name+"/mixed"] = f.bytes()

		// A second section in the other byte order, with its own
		// interfaces, then a packet on an interface it does not have.
		other := binary.ByteOrder(binary.BigEndian)
		if order == binary.BigEndian {
			other = binary.LittleEndian
		}
		g := newNgFile(other)
		g.idb(layers.LinkTypeRaw, 0, 9)
		g.epb(0, t0, 9, uint32(len(frame)-14), uint32(len(frame)-14), frame[14:])
		g.epb(3, t0, 9, uint32(len(frame)-14), uint32(len(frame)-14), frame[14:])
		cases[name+"/sections"] = append(append([]byte(nil), f.bytes()...), g.bytes()...)

		bad := func(mut func(b []byte, order binary.ByteOrder, epb int)) []byte {
			h := newNgFile(order)
			h.idb(layers.LinkTypeEthernet, 0, 0)
			h.epb(0, t0, 6, uint32(len(frame)), uint32(len(frame)), frame)
			epb := h.epb(0, t0, 6, uint32(len(frame)), uint32(len(frame)), frame)
			h.epb(0, t0, 6, uint32(len(frame)), uint32(len(frame)), frame)
			b := append([]byte(nil), h.bytes()...)
			mut(b, order, epb)
			return b
		}
		cases[name+"/no interface"] = bad(func(b []byte, o binary.ByteOrder, e int) { o.PutUint32(b[e+8:], 1) })
		cases[name+"/caplen past block"] = bad(func(b []byte, o binary.ByteOrder, e int) { o.PutUint32(b[e+20:], uint32(len(frame)+4)) })
		cases[name+"/caplen huge"] = bad(func(b []byte, o binary.ByteOrder, e int) { o.PutUint32(b[e+20:], 1<<30) })
		cases[name+"/block short"] = bad(func(b []byte, o binary.ByteOrder, e int) { o.PutUint32(b[e+4:], 28) })
		cases[name+"/block odd"] = bad(func(b []byte, o binary.ByteOrder, e int) { o.PutUint32(b[e+4:], 33) })
		whole := bad(func([]byte, binary.ByteOrder, int) {})
		for _, cut := range []int{1, 4, 20, 60} {
			cases[name+"/truncated"+string(rune('a'+cut%26))] = whole[:len(whole)-cut]
		}

		// The longest packet, and a block larger than the read buffer
		// (a long comment): in place, then left to pcapgo.
		big := newNgFile(order)
		big.idb(layers.LinkTypeEthernet, 0, 0)
		long := make([]byte, capture.MaxRecordLength)
		copy(long, frame)
		big.epb(0, t0, 6, uint32(len(long)), uint32(len(long)), long)
		body := make([]byte, 20)
		order.PutUint32(body[12:16], uint32(len(frame)))
		order.PutUint32(body[16:20], uint32(len(frame)))
		body = append(body, frame...)
		for len(body)%4 != 0 {
			body = append(body, 0)
		}
		body = append(body, big.option(1, bytes.Repeat([]byte("c"), 60000))...)
		for range 10 {
			body = append(body, big.option(1, bytes.Repeat([]byte("d"), 60000))...)
		}
		body = append(body, 0, 0, 0, 0)
		big.block(6, body)
		big.epb(0, t0, 6, uint32(len(frame)), uint32(len(frame)), frame)
		cases[name+"/big"] = big.bytes()
	}
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			sameInChunks(t, data)
			n := sameAsPcapgo(t, data)
			if name == "LittleEndian/resolutions" && n != 7*len(res) {
				t.Errorf("%d packets, want %d", n, 7*len(res))
			}
		})
	}
}

// FuzzNgInPlace: any pcapng file reads the same with Enhanced Packet Blocks
// in place as through pcapgo.
func FuzzNgInPlace(f *testing.F) {
	frame := ether(f, ipv4TCP(f, []byte("fuzz")))
	ng := newNgFile(binary.LittleEndian)
	ng.idb(layers.LinkTypeEthernet, 0, 0)
	ng.idb(layers.LinkTypeRaw, 0, 0x8a)
	ng.epb(0, t0, 6, uint32(len(frame)), uint32(len(frame)), frame)
	ng.epbOptions(0, t0, frame)
	ng.epb(1, t0, 9, 20, 40, frame[14:34])
	f.Add(ng.bytes())
	f.Add(ngResolutions(f, binary.BigEndian, []byte{0, 9, 0x94}))
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sameAsPcapgo(t, data)
	})
}

// sameInChunks reads data in chunks (capture.ChunkReader, which repacks
// pcapng packets) and fails unless every packet and the end are what a
// Source reads.
func sameInChunks(t *testing.T, data []byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "f.pcapng")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := capture.Open(path)
	if err != nil {
		return
	}
	defer src.Close()
	cr, err := capture.OpenChunks(path, 0)
	if err != nil {
		t.Fatalf("OpenChunks: %v", err)
	}
	defer cr.Close()
	w := cr.Walker()
	buf := make([]byte, 0, capture.ChunkSize)
	var q capture.Packet
	n := 0
	for {
		ch, cerr := cr.Next(buf)
		if cerr != nil {
			serr := src.NextInto(&q)
			if serr == nil || serr.Error() != cerr.Error() {
				t.Fatalf("after %d packets: chunks end with %v, the Source with %v", n, cerr, serr)
			}
			return
		}
		w.Walk(ch, func(p *capture.Packet) {
			n++
			if err := src.NextInto(&q); err != nil || !samePacket(p, &q) {
				t.Fatalf("packet %d: chunks %+v; Source %+v, %v", n, *p, q, err)
			}
		})
	}
}

// ngMixed builds a pcapng file of some size octets of random blocks
// (seed): Enhanced Packet Blocks from empty to the longest, some with
// options, statistics, interfaces added as it goes, new sections in either
// byte order, comments larger than half a chunk and, with slow, Simple
// and obsolete Packet Blocks (which are not read in place).
func ngMixed(t testing.TB, seed uint64, size int, slow bool) []byte {
	rng := rand.New(rand.NewPCG(seed, 7))
	frame := ether(t, ipv4TCP(t, []byte("mixed blocks")))
	var out []byte
	order := binary.ByteOrder(binary.LittleEndian)
	f := newNgFile(order)
	f.idb(layers.LinkTypeEthernet, 0, 0)
	f.idb(layers.LinkTypeEthernet, 0, 9)
	ifaces := 2
	ts := t0
	for len(out)+f.buf.Len() < size {
		ts = ts.Add(time.Duration(rng.IntN(1000)) * time.Microsecond)
		data := frame
		switch k := rng.IntN(1000); {
		case k < 3:
			data = make([]byte, rng.IntN(capture.MaxRecordLength+1))
			copy(data, frame)
		case k < 300:
			data = make([]byte, 60+rng.IntN(9000))
			copy(data, frame)
		}
		switch k := rng.IntN(1000); {
		case k < 700:
			// Even interfaces count microseconds, odd ones nanoseconds.
			iface := uint32(rng.IntN(ifaces))
			res := 6 + 3*int(iface%2)
			f.epb(iface, ts, res, uint32(len(data)), uint32(len(data)+rng.IntN(3)), data)
		case k < 850:
			f.epbOptions(uint32(rng.IntN(ifaces)), ts, data)
		case k < 900 && !slow:
			f.epb(0, ts, 6, uint32(len(data)), uint32(len(data)), data)
		case k < 900:
			f.spb(uint32(len(data)), data)
		case k < 930 && slow:
			f.pb(0, ts, data)
		case k < 960:
			f.isb(uint32(rng.IntN(ifaces)))
		case k < 980:
			f.idb(layers.LinkTypeEthernet, 0, byte(6+3*(ifaces%2)))
			ifaces++
		case k < 983:
			// A comment larger than half a chunk.
			body := make([]byte, 4)
			body = append(body, f.option(1, bytes.Repeat([]byte("c"), 600<<10+rng.IntN(60000)))...)
			f.block(0x0BAD, append(body, 0, 0, 0, 0))
		default:
			out = append(out, f.bytes()...)
			order = binary.BigEndian
			if rng.IntN(2) == 0 {
				order = binary.LittleEndian
			}
			f = newNgFile(order)
			f.idb(layers.LinkTypeEthernet, 0, 0)
			f.idb(layers.LinkTypeEthernet, 0, 9)
			ifaces = 2
		}
	}
	return append(out, f.bytes()...)
}

// TestChunksPcapngMixed: pcapng files of many chunks, their blocks read in
// place into the chunks (and the packets that cannot be, repacked), give
// the packets a Source reads, and the same end, whole and cut short
// anywhere; without Simple or obsolete Packet Blocks, every chunk holds
// the blocks in place.
func TestChunksPcapngMixed(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		slow := seed > 2
		data := ngMixed(t, seed, 6<<20, slow)
		sameInChunks(t, data)
		path := filepath.Join(t.TempDir(), "mixed.pcapng")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		cr, err := capture.OpenChunks(path, 0)
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 0, capture.ChunkSize)
		chunks, inPlace, packets := 0, 0, 0
		for {
			ch, err := cr.Next(buf)
			if err != nil {
				break
			}
			chunks++
			packets += ch.N
			if ch.InPlace() {
				inPlace++
			}
			// As flows.Parallel.DecodeChunks takes its buffers back.
			buf = ch.Data[:0]
		}
		cr.Close()
		t.Logf("seed %d: %d packets in %d chunks, %d in place", seed, packets, chunks, inPlace)
		if chunks < 4 || (!slow && inPlace != chunks) || (slow && inPlace == 0) {
			t.Fatalf("seed %d: %d chunks, %d in place", seed, chunks, inPlace)
		}
		rng := rand.New(rand.NewPCG(seed, 9))
		for range 3 {
			sameInChunks(t, data[:rng.IntN(len(data))])
		}
	}
}

// TestNgTimeExact: an Enhanced Packet Block's timestamp is converted
// exactly, in place and through pcapgo alike, for every if_tsresol: the
// fraction of a second scaled to nanoseconds and rounded down (as tshark
// does: a 2^-20 capture of siw's rping shows frame 9 at .737646102 in both),
// here worked out with math/big from the timestamps ngResolutions writes.
// pcapgo's own conversion scaled by 953 for 2^-20, not 953.67.
func TestNgTimeExact(t *testing.T) {
	res := []byte{0, 3, 9, 12, 19, 0x80, 0x8a, 0x94, 0x9e, 0xbf}
	stamps := []uint64{0, 1, 999_999, 1_000_000_007, 1<<40 + 12345, 1<<63 + 1, ^uint64(0)}
	data := ngResolutions(t, binary.LittleEndian, res)
	var want []time.Time
	for i, r := range res {
		units := new(big.Int)
		switch {
		case r == 0:
			units.SetUint64(1e6)
		case r&0x80 != 0:
			units.Lsh(big.NewInt(1), uint(r&0x7f))
		default:
			units.Exp(big.NewInt(10), big.NewInt(int64(r)), nil)
		}
		for _, ts := range stamps {
			sec, frac := new(big.Int).QuoRem(new(big.Int).SetUint64(ts), units, new(big.Int))
			ns := new(big.Int).Quo(frac.Mul(frac, big.NewInt(1e9)), units)
			s := sec.Uint64()
			if i == len(res)-1 {
				s += 1700000000 // if_tsoffset
			}
			want = append(want, time.Unix(int64(s), ns.Int64()).UTC())
		}
	}
	for _, slow := range []bool{false, true} {
		src, err := capture.NewSource(bytes.NewReader(data), "f.pcapng")
		if err != nil {
			t.Fatal(err)
		}
		if slow {
			capture.PcapgoOnly(src)
		}
		var p capture.Packet
		for i, w := range want {
			if err := src.NextInto(&p); err != nil {
				t.Fatalf("slow %v: packet %d: %v", slow, i+1, err)
			}
			if !p.TS.Equal(w) {
				t.Errorf("slow %v: packet %d (resolution %#x, timestamp %d): %v, want %v", slow, i+1, res[i/len(stamps)], stamps[i%len(stamps)], p.TS, w)
			}
		}
		src.Close()
	}
}

// TestNgSecondsResolution: an interface whose if_tsresol is 0 counts its
// timestamps in whole seconds (draft-ietf-opsawg-pcapng §4.2: the
// resolution is 10^-0), as tshark reads them, and one without the option
// in microseconds; pcapgo takes the 0 for its default of microseconds.
// The same through the in-place reader, pcapgo's, and the chunk reader,
// and as tshark 4.0's frame.time_epoch.
func TestNgSecondsResolution(t *testing.T) {
	f := newNgFile(binary.LittleEndian)
	frame := ether(t, ipv4TCP(t, []byte("seconds")))
	for _, opts := range [][]byte{append(f.option(9, []byte{0}), 0, 0, 0, 0), nil} {
		body := make([]byte, 8)
		binary.LittleEndian.PutUint16(body[0:2], uint16(layers.LinkTypeEthernet))
		f.block(1, append(body, opts...))
	}
	stamps := []uint64{1700000007, 1700000007_000123}
	for i, units := range stamps {
		body := make([]byte, 20)
		binary.LittleEndian.PutUint32(body[0:4], uint32(i))
		binary.LittleEndian.PutUint32(body[4:8], uint32(units>>32))
		binary.LittleEndian.PutUint32(body[8:12], uint32(units))
		binary.LittleEndian.PutUint32(body[12:16], uint32(len(frame)))
		binary.LittleEndian.PutUint32(body[16:20], uint32(len(frame)))
		f.block(6, append(body, frame...))
	}
	data := f.bytes()
	want := []time.Time{time.Unix(1700000007, 0).UTC(), time.Unix(1700000007, 123000).UTC()}
	for _, slow := range []bool{false, true} {
		src, err := capture.NewSource(bytes.NewReader(data), "f.pcapng")
		if err != nil {
			t.Fatal(err)
		}
		if slow {
			capture.PcapgoOnly(src)
		}
		for i, w := range want {
			p, err := src.Next()
			if err != nil || !p.TS.Equal(w) {
				t.Errorf("slow %v, packet %d: %v, %v; want %v", slow, i+1, p.TS, err, w)
			}
		}
		src.Close()
	}
	path := filepath.Join(t.TempDir(), "s.pcapng")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	cr, err := capture.OpenChunks(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer cr.Close()
	ch, err := cr.Next(make([]byte, 0, capture.ChunkSize))
	if err != nil {
		t.Fatal(err)
	}
	var got []time.Time
	cr.Walker().Walk(ch, func(p *capture.Packet) { got = append(got, p.TS) })
	if len(got) != 2 || !got[0].Equal(want[0]) || !got[1].Equal(want[1]) {
		t.Errorf("chunk reader: %v, want %v", got, want)
	}
	if tshark, err := exec.LookPath("tshark"); err == nil {
		out, err := exec.Command(tshark, "-r", path, "-T", "fields", "-e", "frame.time_epoch").Output()
		if err != nil {
			t.Fatalf("tshark: %v", err)
		}
		if got := strings.Fields(string(out)); len(got) != 2 || got[0] != "1700000007.000000000" || got[1] != "1700000007.000123000" {
			t.Errorf("tshark reads %q", got)
		}
	} else if os.Getenv("IWARP_REQUIRE_TSHARK") == "1" {
		t.Fatalf("tshark is required (IWARP_REQUIRE_TSHARK=1): %v", err)
	}
}
