package synth

// An independent checker of a generated capture against its truth file. It
// reads the pcap with its own link/IP/TCP parsing, rebuilds each direction's
// byte stream from the captured frames, and verifies every truth record by
// plain arithmetic on those octets: CRCs with hash/crc32, markers on the
// grid, headers bit by bit. It shares no code with the generator (only the
// exported Truth* types, used as JSON containers).

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket/pcapgo"
)

var castagnoliTable = crc32.MakeTable(crc32.Castagnoli)

// pkt is one captured TCP segment as the checker parsed it.
type pkt struct {
	frame    uint64
	ts       time.Time
	src, dst netip.AddrPort
	seq      uint32
	syn      bool
	fin      bool
	rst      bool
	payload  []byte // captured payload octets
	fullLen  int    // payload octets on the wire
	capLen   int    // frame octets captured
	origLen  int    // frame octets on the wire
}

// capture is a parsed pcap file.
type capture struct {
	linkType int
	snaplen  uint32
	pkts     []pkt
}

func onesSum(b []byte, sum uint32) uint32 {
	for len(b) >= 2 {
		sum += uint32(b[0])<<8 | uint32(b[1])
		b = b[2:]
	}
	if len(b) == 1 {
		sum += uint32(b[0]) << 8
	}
	return sum
}

func fold(sum uint32) uint16 {
	for sum > 0xFFFF {
		sum = sum&0xFFFF + sum>>16
	}
	return uint16(sum)
}

// parsePcap reads a pcap written with link type Ethernet, raw IP or SLL and
// checks the IP and TCP checksums of every untruncated frame.
func parsePcap(t testing.TB, data []byte) *capture {
	t.Helper()
	r, err := pcapgo.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("pcap: %v", err)
	}
	c := &capture{linkType: int(r.LinkType()), snaplen: r.Snaplen()}
	for n := uint64(1); ; n++ {
		b, ci, err := r.ReadPacketData()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("pcap frame %d: %v", n, err)
		}
		full := ci.CaptureLength == ci.Length
		var ip []byte
		switch c.linkType {
		case 1:
			if len(b) < 14 {
				t.Fatalf("frame %d: short ethernet", n)
			}
			ip = b[14:]
		case 101:
			ip = b
		case 113:
			if len(b) < 16 {
				t.Fatalf("frame %d: short sll", n)
			}
			ip = b[16:]
		default:
			t.Fatalf("unexpected link type %d", c.linkType)
		}
		p := pkt{frame: n, ts: ci.Timestamp, capLen: ci.CaptureLength, origLen: ci.Length}
		var tcp []byte
		var pseudo uint32
		var tcpLen int
		switch ip[0] >> 4 {
		case 4:
			ihl := int(ip[0]&0x0F) * 4
			total := int(binary.BigEndian.Uint16(ip[2:]))
			if ip[9] != 6 {
				t.Fatalf("frame %d: not TCP", n)
			}
			if fold(onesSum(ip[:ihl], 0)) != 0xFFFF {
				t.Errorf("frame %d: bad IPv4 header checksum", n)
			}
			src, _ := netip.AddrFromSlice(ip[12:16])
			dst, _ := netip.AddrFromSlice(ip[16:20])
			p.src, p.dst = netip.AddrPortFrom(src, 0), netip.AddrPortFrom(dst, 0)
			tcp = ip[ihl:min(len(ip), total)]
			tcpLen = total - ihl
			pseudo = onesSum(ip[12:20], 6+uint32(tcpLen))
		case 6:
			if ip[6] != 6 {
				t.Fatalf("frame %d: not TCP", n)
			}
			src, _ := netip.AddrFromSlice(ip[8:24])
			dst, _ := netip.AddrFromSlice(ip[24:40])
			p.src, p.dst = netip.AddrPortFrom(src, 0), netip.AddrPortFrom(dst, 0)
			tcpLen = int(binary.BigEndian.Uint16(ip[4:]))
			tcp = ip[40:min(len(ip), 40+tcpLen)]
			pseudo = onesSum(ip[8:40], 6+uint32(tcpLen))
		default:
			t.Fatalf("frame %d: IP version %d", n, ip[0]>>4)
		}
		p.src = netip.AddrPortFrom(p.src.Addr(), binary.BigEndian.Uint16(tcp[0:]))
		p.dst = netip.AddrPortFrom(p.dst.Addr(), binary.BigEndian.Uint16(tcp[2:]))
		p.seq = binary.BigEndian.Uint32(tcp[4:])
		hl := int(tcp[12]>>4) * 4
		fl := tcp[13]
		p.fin, p.syn, p.rst = fl&1 != 0, fl&2 != 0, fl&4 != 0
		p.fullLen = tcpLen - hl
		if len(tcp) > hl {
			p.payload = tcp[hl:]
		}
		if full {
			if len(tcp) != tcpLen {
				t.Errorf("frame %d: TCP length %d, IP says %d", n, len(tcp), tcpLen)
			}
			if fold(onesSum(tcp, pseudo)) != 0xFFFF {
				t.Errorf("frame %d: bad TCP checksum", n)
			}
		}
		c.pkts = append(c.pkts, p)
	}
	return c
}

// truthFile is a parsed truth file.
type truthFile struct {
	order []Record // in file order
	mpa   []*TruthMPA
	fpdu  []*TruthFPDU
	gaps  []*TruthGap
	conns []*TruthConn
}

func parseTruth(t testing.TB, data []byte) *truthFile {
	t.Helper()
	tf := &truthFile{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for line := 1; sc.Scan(); line++ {
		var head struct {
			V    int    `json:"v"`
			Type string `json:"type"`
		}
		if err := json.Unmarshal(sc.Bytes(), &head); err != nil {
			t.Fatalf("truth line %d: %v", line, err)
		}
		if head.V != 1 {
			t.Fatalf("truth line %d: v=%d", line, head.V)
		}
		var r Record
		switch head.Type {
		case "mpa":
			x := &TruthMPA{}
			tf.mpa, r = append(tf.mpa, x), x
		case "fpdu":
			x := &TruthFPDU{}
			tf.fpdu, r = append(tf.fpdu, x), x
		case "gap":
			x := &TruthGap{}
			tf.gaps, r = append(tf.gaps, x), x
		case "conn":
			x := &TruthConn{}
			tf.conns, r = append(tf.conns, x), x
		default:
			t.Fatalf("truth line %d: type %q", line, head.Type)
		}
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(r); err != nil {
			t.Fatalf("truth line %d: %v", line, err)
		}
		tf.order = append(tf.order, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return tf
}

// span is the captured payload of one frame in stream offsets.
type span struct {
	frame uint64
	off   uint64
	n     int
}

// stream is one direction of a connection rebuilt from the capture.
type stream struct {
	isn   uint32
	data  []byte
	have  []bool
	spans []span
}

func (s *stream) off(seq uint32) uint64 { return uint64(seq - (s.isn + 1)) }

func (s *stream) covered(off uint64, n int) bool {
	for i := off; i < off+uint64(n); i++ {
		if i >= uint64(len(s.have)) || !s.have[i] {
			return false
		}
	}
	return true
}

// frames returns the frames whose captured payload overlaps [off, off+n)
// and the first frame (capture order) holding octet off.
func (s *stream) frames(off uint64, n int) ([]uint64, uint64) {
	fs := []uint64{}
	var first uint64
	for _, sp := range s.spans {
		a, b := max(sp.off, off), min(sp.off+uint64(sp.n), off+uint64(n))
		if a < b {
			fs = append(fs, sp.frame)
			if a == off && (first == 0 || sp.frame < first) {
				first = sp.frame
			}
		}
	}
	slices.Sort(fs)
	return slices.Compact(fs), first
}

type dirKey struct {
	conn int
	dir  string
}

// checkCapture verifies a truth file against its pcap. It returns the
// rebuilt streams for further scenario-specific checks.
func checkCapture(t testing.TB, pcapData, truthData []byte) (*capture, *truthFile, map[dirKey]*stream) {
	t.Helper()
	c := parsePcap(t, pcapData)
	tf := parseTruth(t, truthData)
	if len(tf.conns) == 0 {
		t.Fatal("truth has no conn record")
	}
	// conn records come last, in connection order.
	for i, cr := range tf.conns {
		if cr.Conn != i || tf.order[len(tf.order)-len(tf.conns)+i] != Record(cr) {
			t.Fatalf("conn records not last / in order")
		}
	}
	streams := map[dirKey]*stream{}
	type ep struct{ src, dst string }
	byEP := map[ep]dirKey{}
	for _, cr := range tf.conns {
		streams[dirKey{cr.Conn, "i2r"}] = &stream{isn: cr.ISNI, data: make([]byte, cr.OctetsI2R), have: make([]bool, cr.OctetsI2R)}
		streams[dirKey{cr.Conn, "r2i"}] = &stream{isn: cr.ISNR, data: make([]byte, cr.OctetsR2I), have: make([]bool, cr.OctetsR2I)}
		byEP[ep{cr.Initiator, cr.Responder}] = dirKey{cr.Conn, "i2r"}
		byEP[ep{cr.Responder, cr.Initiator}] = dirKey{cr.Conn, "r2i"}
	}
	frameTS := map[uint64]time.Time{}
	synSeen := map[int]bool{}
	for _, p := range c.pkts {
		frameTS[p.frame] = p.ts
		k, ok := byEP[ep{p.src.String(), p.dst.String()}]
		if !ok {
			t.Fatalf("frame %d: %v -> %v belongs to no connection", p.frame, p.src, p.dst)
		}
		s := streams[k]
		if p.syn {
			synSeen[k.conn] = true
			if p.seq != s.isn {
				t.Errorf("frame %d: SYN seq %d, truth ISN %d", p.frame, p.seq, s.isn)
			}
			continue
		}
		if len(p.payload) == 0 {
			continue
		}
		off := s.off(p.seq)
		if off+uint64(p.fullLen) > uint64(len(s.data)) {
			t.Fatalf("frame %d: payload at offset %d+%d beyond the %d stream octets the truth lists", p.frame, off, p.fullLen, len(s.data))
		}
		for i, b := range p.payload {
			if !s.have[off+uint64(i)] { // the first copy wins
				s.data[off+uint64(i)] = b
				s.have[off+uint64(i)] = true
			}
		}
		s.spans = append(s.spans, span{p.frame, off, len(p.payload)})
	}
	for _, cr := range tf.conns {
		if synSeen[cr.Conn] != cr.Handshake {
			t.Errorf("conn %d: handshake %v in truth, SYN captured %v", cr.Conn, cr.Handshake, synSeen[cr.Conn])
		}
	}

	// File order: by the frame of the first octet.
	var last uint64
	for _, r := range tf.order {
		var f uint64
		switch x := r.(type) {
		case *TruthMPA:
			f = x.Frame
		case *TruthFPDU:
			f = x.Frame
		}
		if f != 0 {
			if f < last {
				t.Errorf("truth out of frame order: frame %d after %d", f, last)
			}
			last = f
		}
	}

	type piece struct {
		off uint64
		n   int
	}
	tiles := map[dirKey][]piece{}
	checkCommon := func(what string, k dirKey, seq uint32, off uint64, n int, frame uint64, ts string, frames []uint64, captured bool) {
		s := streams[k]
		if seq != s.isn+1+uint32(off) {
			t.Errorf("%s: seq %d does not match off %d (ISN %d)", what, seq, off, s.isn)
		}
		tiles[k] = append(tiles[k], piece{off, n})
		fs, first := s.frames(off, n)
		if !slices.Equal(fs, frames) {
			t.Errorf("%s: frames %v, capture has %v", what, frames, fs)
		}
		if first != frame {
			t.Errorf("%s: frame %d, first octet captured in %d", what, frame, first)
		}
		if frame != 0 {
			want := frameTS[frame].UTC().Format("2006-01-02T15:04:05.000000000Z07:00")
			if ts != want {
				t.Errorf("%s: ts %s, frame %d has %s", what, ts, frame, want)
			}
		}
		if got := s.covered(off, n); got != captured {
			t.Errorf("%s: captured %v, capture holds all octets: %v", what, captured, got)
		}
	}

	for _, m := range tf.mpa {
		k := dirKey{m.Conn, m.Dir}
		what := fmt.Sprintf("conn %d %s mpa %s at %d", m.Conn, m.Dir, m.Kind, m.Off)
		checkCommon(what, k, m.Seq, m.Off, m.Len, m.Frame, m.TS, m.Frames, m.Captured)
		if m.Len != 20+m.PDLen || len(m.PD) != 2*m.PDLen {
			t.Errorf("%s: len %d pd_len %d pd %q", what, m.Len, m.PDLen, m.PD)
		}
		if !m.Captured {
			continue
		}
		w := streams[k].data[m.Off : m.Off+uint64(m.Len)]
		key := "MPA ID Req Frame"
		if m.Kind == "reply" {
			key = "MPA ID Rep Frame"
		}
		if string(w[:16]) != key {
			t.Errorf("%s: key %q", what, w[:16])
		}
		fl := w[16]
		if fl&0x80 != 0 != m.M || fl&0x40 != 0 != m.C || fl&0x20 != 0 != m.R || fl&0x10 != 0 != m.S || fl&0x0F != m.Res {
			t.Errorf("%s: flags octet %#02x vs m=%v c=%v r=%v s=%v res=%d", what, fl, m.M, m.C, m.R, m.S, m.Res)
		}
		if w[17] != m.Rev || int(binary.BigEndian.Uint16(w[18:])) != m.PDLen || hex.EncodeToString(w[20:]) != m.PD {
			t.Errorf("%s: rev/pd mismatch", what)
		}
		if m.Enhanced != nil {
			w0, w1 := binary.BigEndian.Uint16(w[20:]), binary.BigEndian.Uint16(w[22:])
			e := m.Enhanced
			if w0&0x3FFF != e.IRD || w1&0x3FFF != e.ORD || w0&0x8000 != 0 != e.A || w0&0x4000 != 0 != e.B || w1&0x8000 != 0 != e.C || w1&0x4000 != 0 != e.D {
				t.Errorf("%s: enhanced data %04x %04x vs %+v", what, w0, w1, e)
			}
		}
	}

	connOf := func(i int) *TruthConn { return tf.conns[i] }
	type msgState struct {
		open   bool
		key    uint64 // MSN or STag
		off    uint64 // MO or TO expected next
		opcode uint8
	}
	msnNext := map[dirKey]map[uint32]uint32{}
	tagged := map[dirKey]*msgState{}
	untagged := map[dirKey]map[uint32]*msgState{}
	counts := map[int]*TruthConn{}
	for _, cr := range tf.conns {
		counts[cr.Conn] = &TruthConn{}
	}
	fpdus := slices.Clone(tf.fpdu)
	slices.SortStableFunc(fpdus, func(a, b *TruthFPDU) int {
		if a.Conn != b.Conn {
			return a.Conn - b.Conn
		}
		if a.Dir != b.Dir {
			return strings.Compare(a.Dir, b.Dir)
		}
		return int(a.Off) - int(b.Off)
	})
	for _, f := range fpdus {
		k := dirKey{f.Conn, f.Dir}
		cr := connOf(f.Conn)
		s := streams[k]
		what := fmt.Sprintf("conn %d %s fpdu #%d at %d", f.Conn, f.Dir, f.Index, f.Off)
		checkCommon(what, k, f.Seq, f.Off, f.Len, f.Frame, f.TS, f.Frames, f.Captured)
		cnt := counts[f.Conn]
		cnt.FPDUs++
		if f.Captured {
			cnt.FPDUsCaptured++
		}
		if f.MPA.CRCStatus == "bad" {
			cnt.CRCErrors++
		}

		// Markers: every grid point inside the FPDU, nothing else.
		markersOn, origin := cr.MPA.MarkersI2R, cr.OriginI2R
		if f.Dir == "r2i" {
			markersOn, origin = cr.MPA.MarkersR2I, cr.OriginR2I
		}
		var want []uint64
		if markersOn {
			if origin == nil {
				t.Fatalf("%s: markers on but no origin", what)
			}
			o := s.off(*origin)
			for p := f.Off; p < f.Off+uint64(f.Len); p++ {
				if p >= o && (p-o)%512 == 0 {
					want = append(want, p)
				}
			}
		}
		var got []uint64
		for _, m := range f.MPA.Markers {
			got = append(got, m.Off)
			if m.Seq != s.isn+1+uint32(m.Off) || m.FPDUPtr != uint16(m.Off-f.Off) || !m.OK {
				t.Errorf("%s: marker %+v", what, m)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: markers at %v, grid says %v", what, got, want)
		}
		// Message bookkeeping: MSN from 1 per queue, MO/TO advancing.
		if d := f.DDP; d != nil {
			if d.T {
				st := tagged[k]
				if st == nil || !st.open {
					st = &msgState{open: true, key: uint64(*d.STag), off: *d.TO, opcode: f.RDMAP.Opcode}
					tagged[k] = st
				}
				if uint64(*d.STag) != st.key || *d.TO != st.off || f.RDMAP.Opcode != st.opcode {
					t.Errorf("%s: tagged message broken: stag %#x to %d, want %#x %d", what, *d.STag, *d.TO, st.key, st.off)
				}
				st.off += uint64(f.PayloadLen)
				st.open = !d.L
			} else {
				if untagged[k] == nil {
					untagged[k], msnNext[k] = map[uint32]*msgState{}, map[uint32]uint32{}
				}
				st := untagged[k][*d.QN]
				if st == nil || !st.open {
					msnNext[k][*d.QN]++
					st = &msgState{open: true, key: uint64(msnNext[k][*d.QN]), opcode: f.RDMAP.Opcode}
					untagged[k][*d.QN] = st
				}
				if uint64(*d.MSN) != st.key || uint64(*d.MO) != st.off || f.RDMAP.Opcode != st.opcode {
					t.Errorf("%s: untagged message broken: qn %d msn %d mo %d, want msn %d mo %d", what, *d.QN, *d.MSN, *d.MO, st.key, st.off)
				}
				st.off += uint64(f.PayloadLen)
				st.open = !d.L
			}
			if d.L {
				cnt.Messages++
			}
		}
		plainLen := 2 + f.MPA.ULPDULen + f.MPA.Pad + 4
		if f.MPA.Pad != (4-(f.MPA.ULPDULen+2)%4)%4 || f.Len != plainLen+4*len(want) {
			t.Errorf("%s: len %d ulpdu %d pad %d markers %d", what, f.Len, f.MPA.ULPDULen, f.MPA.Pad, len(want))
		}
		if !f.Captured {
			if f.MPA.CRCStatus != "incomplete" {
				t.Errorf("%s: not captured but crc_status %q", what, f.MPA.CRCStatus)
			}
			continue
		}

		// Strip the markers and read the FPDU.
		wire := s.data[f.Off : f.Off+uint64(f.Len)]
		var plain []byte
		crcWire := -1 // wire index of the first CRC octet
		for i := 0; i < len(wire); {
			if slices.Contains(want, f.Off+uint64(i)) {
				if binary.BigEndian.Uint16(wire[i:]) != 0 || binary.BigEndian.Uint16(wire[i+2:]) != uint16(i) {
					t.Errorf("%s: marker octets % x at %d", what, wire[i:i+4], i)
				}
				i += 4
				continue
			}
			if len(plain) == plainLen-4 && crcWire < 0 {
				crcWire = i
			}
			plain = append(plain, wire[i])
			i++
		}
		if len(plain) != plainLen {
			t.Fatalf("%s: %d plain octets, want %d", what, len(plain), plainLen)
		}
		ulen := int(binary.BigEndian.Uint16(plain))
		if ulen != f.MPA.ULPDULen {
			t.Errorf("%s: ULPDU_Length %d, truth %d", what, ulen, f.MPA.ULPDULen)
		}
		for _, b := range plain[2+ulen : plainLen-4] {
			if b != 0 {
				t.Errorf("%s: PAD not zero", what)
			}
		}
		crcField := binary.LittleEndian.Uint32(plain[plainLen-4:])
		if crcField != f.MPA.CRC {
			t.Errorf("%s: CRC field %#x, truth %#x", what, crcField, f.MPA.CRC)
		}
		computed := crc32.Checksum(wire[:crcWire], castagnoliTable)
		switch f.MPA.CRCStatus {
		case "ok":
			if computed != crcField {
				t.Errorf("%s: crc ok in truth but computed %#x != field %#x", what, computed, crcField)
			}
		case "bad":
			if computed == crcField {
				t.Errorf("%s: crc bad in truth but it checks", what)
			}
		case "unchecked":
			if cr.MPA.CRC {
				t.Errorf("%s: unchecked but CRC negotiated", what)
			}
		default:
			t.Errorf("%s: crc_status %q", what, f.MPA.CRCStatus)
		}
		if (f.MPA.CRCStatus == "unchecked") == cr.MPA.CRC {
			t.Errorf("%s: crc_status %q, conn crc %v", what, f.MPA.CRCStatus, cr.MPA.CRC)
		}
		u := plain[2 : 2+ulen]
		if f.DDP == nil {
			if f.RDMAP != nil {
				t.Errorf("%s: rdmap without ddp", what)
			}
			continue
		}
		checkSegment(t, what, u, f, cr)

	}

	// Every direction is tiled by its MPA frames and FPDUs, from offset 0 to
	// the end of the stream.
	for k, ps := range tiles {
		slices.SortFunc(ps, func(a, b piece) int { return int(a.off) - int(b.off) })
		at := uint64(0)
		for _, p := range ps {
			if p.off != at {
				t.Errorf("conn %d %s: record at %d, previous ends at %d", k.conn, k.dir, p.off, at)
			}
			at = p.off + uint64(p.n)
		}
		if at != uint64(len(streams[k].data)) {
			t.Errorf("conn %d %s: records end at %d, stream has %d octets", k.conn, k.dir, at, len(streams[k].data))
		}
	}

	// Gaps: exactly the uncovered octets after the direction's capture start.
	gapsOf := map[dirKey][]piece{}
	for _, g := range tf.gaps {
		k := dirKey{g.Conn, g.Dir}
		if g.Seq != streams[k].isn+1+uint32(g.Off) {
			t.Errorf("gap seq/off mismatch %+v", g)
		}
		gapsOf[k] = append(gapsOf[k], piece{g.Off, int(g.Len)})
	}
	for k, s := range streams {
		lo := 0
		if connOf(k.conn).Midstream {
			lo = slices.Index(s.have, true)
			if lo < 0 {
				continue
			}
		}
		var holes []piece
		for i := lo; i < len(s.have); i++ {
			if !s.have[i] {
				j := i
				for j < len(s.have) && !s.have[j] {
					j++
				}
				holes = append(holes, piece{uint64(i), j - i})
				i = j
			}
		}
		slices.SortFunc(gapsOf[k], func(a, b piece) int { return int(a.off) - int(b.off) })
		if !slices.Equal(holes, gapsOf[k]) {
			t.Errorf("conn %d %s: holes %v, gap records %v", k.conn, k.dir, holes, gapsOf[k])
		}
	}

	for _, cr := range tf.conns {
		cnt := counts[cr.Conn]
		if cr.FPDUs != cnt.FPDUs || cr.FPDUsCaptured != cnt.FPDUsCaptured || cr.CRCErrors != cnt.CRCErrors || cr.Messages != cnt.Messages || cr.Gaps != len(gapsOf[dirKey{cr.Conn, "i2r"}])+len(gapsOf[dirKey{cr.Conn, "r2i"}]) {
			t.Errorf("conn %d: summary %+v, counted fpdus %d captured %d crc errors %d messages %d", cr.Conn, cr, cnt.FPDUs, cnt.FPDUsCaptured, cnt.CRCErrors, cnt.Messages)
		}
	}
	return c, tf, streams
}

// checkSegment compares the DDP/RDMAP octets u of an FPDU with its truth.
func checkSegment(t testing.TB, what string, u []byte, f *TruthFPDU, cr *TruthConn) {
	t.Helper()
	d, r := f.DDP, f.RDMAP
	if len(u) < 2 {
		t.Errorf("%s: ULPDU of %d octets with a DDP header in truth", what, len(u))
		return
	}
	ctrl, rc := u[0], u[1]
	if ctrl&0x80 != 0 != d.T || ctrl&0x40 != 0 != d.L || (ctrl>>2)&0x0F != d.Rsvd || ctrl&3 != d.DV {
		t.Errorf("%s: DDP control %#02x vs %+v", what, ctrl, d)
	}
	if rc>>6 != r.RV || rc&0x0F != r.Opcode {
		t.Errorf("%s: RDMAP control %#02x vs rv %d opcode %d", what, rc, r.RV, r.Opcode)
	}
	if d.DV != cr.DDPVersion || r.RV != cr.RDMAPVersion {
		t.Errorf("%s: dv %d rv %d, conn says %d %d", what, d.DV, r.RV, cr.DDPVersion, cr.RDMAPVersion)
	}
	be32 := func(i int) uint32 { return binary.BigEndian.Uint32(u[i:]) }
	be64 := func(i int) uint64 { return binary.BigEndian.Uint64(u[i:]) }
	hdr := 18
	if d.T {
		hdr = 14
		if d.STag == nil || d.TO == nil || d.QN != nil || be32(2) != *d.STag || be64(6) != *d.TO {
			t.Errorf("%s: tagged header % x vs %+v", what, u[:14], d)
		}
	} else {
		if d.QN == nil || d.STag != nil || be32(6) != *d.QN || be32(10) != *d.MSN || be32(14) != *d.MO {
			t.Errorf("%s: untagged header % x vs %+v", what, u[:18], d)
		}
		inval := uint32(0)
		if r.InvalSTag != nil {
			inval = *r.InvalSTag
		}
		if be32(2) != inval {
			t.Errorf("%s: invalidate STag %#x, truth %#x", what, be32(2), inval)
		}
	}
	switch r.Opcode {
	case 1:
		rr := r.Read
		if rr == nil || be32(18) != rr.SinkSTag || be64(22) != rr.SinkTO || be32(30) != rr.Size || be32(34) != rr.SrcSTag || be64(38) != rr.SrcTO {
			t.Errorf("%s: read request % x vs %+v", what, u[18:46], rr)
		}
		hdr += 28
	case 7:
		tm := r.Term
		n := 4
		if tm.M || tm.D {
			n += 2
			if tm.DDPSegLen == nil || binary.BigEndian.Uint16(u[22:]) != *tm.DDPSegLen {
				t.Errorf("%s: terminate DDP segment length", what)
			}
		}
		if tm.D {
			if tm.DDP.T {
				n += 14
			} else {
				n += 18
			}
		}
		if tm.R {
			n += 28
		}
		if !tm.SiwLayout {
			if u[18] != tm.Layer<<4|tm.EType || u[19] != tm.Code || (u[20]&0x80 != 0) != tm.M || (u[20]&0x40 != 0) != tm.D || (u[20]&0x20 != 0) != tm.R {
				t.Errorf("%s: terminate control % x vs %+v", what, u[18:22], tm)
			}
		} else if u[18] != tm.Layer|tm.EType<<4 || u[19] != tm.Code {
			t.Errorf("%s: siw terminate control % x vs %+v", what, u[18:22], tm)
		}
		hdr += n
	case 8, 9:
		if r.Immediate == nil || be64(18) != *r.Immediate {
			t.Errorf("%s: immediate data", what)
		}
		hdr += 8
	case 10:
		a := r.Atomic
		if a == nil || be32(18)&0x0F != uint32(*a.Op) || be32(22) != a.ReqID || be32(26) != *a.RemoteSTag || be64(30) != *a.RemoteTO ||
			be64(38) != *a.AddSwapData || be64(46) != *a.AddSwapMask || be64(54) != *a.CompareData || be64(62) != *a.CompareMask {
			t.Errorf("%s: atomic request % x vs %+v", what, u[18:70], a)
		}
		hdr += 52
	case 11:
		a := r.Atomic
		if a == nil || be32(18) != a.ReqID || be64(22) != *a.OrigValue {
			t.Errorf("%s: atomic response", what)
		}
		hdr += 12
	}
	if f.PayloadLen != len(u)-hdr {
		t.Errorf("%s: payload_len %d, ULPDU %d - header %d", what, f.PayloadLen, len(u), hdr)
	}
}
