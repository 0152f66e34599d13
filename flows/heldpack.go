package flows

import (
	"encoding/binary"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/iwarpkit/iwarpkit/dissect/rdmap"
	"github.com/iwarpkit/iwarpkit/internal/varpack"
)

// Records wait in the ordering queue (orderQueue) while a connection may
// still emit one about an earlier frame: the record of a message still
// open is about its first frame, and every record after it waits for it,
// up to Options.MaxHeld. An FPDU record takes 816 octets as an fpduBox; a
// decode with thousands of connections each in the middle of a message,
// or one long message, held 16,384 of them, 13 MB. Past heldPackAt
// records waiting, the queue packs the FPDU records pushed into it as
// varints (a Decoder's between packets, orderQueue.packHeld: a record may
// still change while its packet is decoded; a Parallel's merge as they
// come), some 60 to 110 octets each (the record's fields, the FPDU's
// and the DDP and RDMAP headers'), in blocks of heldBlockSize, and the
// box goes back to be reused at once; the record is unpacked into a box
// again when it comes to the head of the queue. Like the conn records of
// retired.go it is written by hand with internal/varpack: the encoding
// lives only while the record waits. A record it cannot pack (findings, a
// Terminate, an atomic, a segment error, a zone in an address) stays
// whole; so does every record once heldMaxBlocks blocks are in use, as
// when a few records still waiting keep a block each.
//
// The workload of issue 6 holds at most 191 records at a time (JSON
// Lines, 1 or 2 workers), and small messages 125: neither packs any.

// heldPackAt is the number of records waiting past which the queue packs
// the FPDU records pushed into it.
var heldPackAt = 1024 // a variable for tests

// heldPacked counts the records packed, for tests.
var heldPacked atomic.Uint64

const (
	heldBlockSize = 64 << 10
	heldMaxBlocks = 64
)

// heldPack holds the packed records of an orderQueue.
type heldPack struct {
	blocks []heldBlock
	freeID []int    // indexes of blocks not in use
	spare  [][]byte // emptied blocks' octets, for reuse (a few)
	cur    int      // the block being filled, -1 for none
	inUse  int
	enc    []byte
	// newBox returns an empty box to unpack a record into; drop takes the
	// box of a record just packed.
	newBox func() *fpduBox
	drop   func(*fpduBox)
}

type heldBlock struct {
	b    []byte
	live int // records packed in b and not yet unpacked
}

func newHeldPack(newBox func() *fpduBox, drop func(*fpduBox)) *heldPack {
	return &heldPack{cur: -1, newBox: newBox, drop: drop}
}

// Flags of a packed FPDU record.
const (
	heldZeroTS = 1 << iota
	heldFrames
	heldMarkers
	heldPreview
	heldSegOK
	heldT
	heldL
	heldFlushed
	heldCRCCut
)

// canHold reports whether r is an FPDU record appendHeld packs whole.
func canHold(r *Record) bool {
	if r.Type != RecFPDU || r.box != boxFPDU || r.FPDU != &(*fpduBox)(unsafe.Pointer(r)).f ||
		r.MPA != nil || r.Message != nil || r.Finding != nil || r.Summary != nil || r.CM != nil || r.SCTP != nil ||
		r.local != nil || r.Src.Addr().Zone() != "" || r.Dst.Addr().Zone() != "" {
		return false
	}
	if !r.TS.IsZero() && r.TS.Location() != time.UTC {
		return false
	}
	f := r.FPDU
	if f.SegErr != nil || f.Findings != nil || f.Seg.Payload != nil || len(f.Preview) > PreviewLen || f.Seg.HdrCut != 0 ||
		f.Seg.Term != (rdmap.Terminate{}) || f.Seg.AtomicReq != (rdmap.AtomicRequest{}) || f.Seg.AtomicResp != (rdmap.AtomicResponse{}) {
		return false
	}
	return len(f.Preview) == 0 || &f.Preview[0] == &(*fpduBox)(unsafe.Pointer(r)).f.previewBuf[0]
}

// appendHeld appends r, for which canHold holds, packed.
func appendHeld(b []byte, r *Record) []byte {
	f := r.FPDU
	h := &f.Seg.DDP
	fl := uint64(0)
	for _, c := range [...]struct {
		on  bool
		bit uint64
	}{{r.TS.IsZero(), heldZeroTS}, {f.Frames != nil, heldFrames}, {f.Markers != nil, heldMarkers},
		{f.Preview != nil, heldPreview}, {f.SegOK, heldSegOK}, {h.T, heldT}, {h.L, heldL}, {r.flushed, heldFlushed}, {f.CRCCut, heldCRCCut}} {
		if c.on {
			fl |= c.bit
		}
	}
	b = binary.AppendUvarint(b, fl)
	b = binary.AppendUvarint(b, r.Frame)
	if !r.TS.IsZero() {
		b = binary.AppendVarint(b, r.TS.Unix())
		b = binary.AppendUvarint(b, uint64(r.TS.Nanosecond()))
	}
	b = binary.AppendVarint(b, int64(r.Conn))
	b = varpack.AppendAddrPort(b, r.Src)
	b = varpack.AppendAddrPort(b, r.Dst)
	b = append(b, byte(r.Dir))
	b = binary.AppendUvarint(b, r.order)
	b = binary.AppendUvarint(b, uint64(r.pkt))

	b = binary.AppendUvarint(b, uint64(f.Seq))
	b = binary.AppendUvarint(b, f.Off)
	b = binary.AppendVarint(b, int64(f.Len))
	b = binary.AppendUvarint(b, uint64(len(f.Frames)))
	for _, fr := range f.Frames {
		b = binary.AppendUvarint(b, fr)
	}
	b = binary.AppendUvarint(b, uint64(f.ULPDULen))
	b = binary.AppendVarint(b, int64(f.Pad))
	b = binary.AppendUvarint(b, uint64(len(f.Markers)))
	for _, m := range f.Markers {
		b = binary.AppendUvarint(b, uint64(m.Seq))
		b = binary.AppendUvarint(b, uint64(m.FPDUPtr))
		b = binary.AppendUvarint(b, uint64(m.Rsvd))
		ok := byte(0)
		if m.OK {
			ok = 1
		}
		b = append(b, ok)
	}
	b = binary.LittleEndian.AppendUint32(b, f.CRC)
	b = append(b, byte(f.CRCStatus), h.Rsvd, h.DV, h.ULPCtrl)
	for _, v := range [...]uint64{uint64(h.STag), h.TO, uint64(h.ULPRsvd), uint64(h.QN), uint64(h.MSN), uint64(h.MO)} {
		b = binary.AppendUvarint(b, v)
	}
	s := &f.Seg
	b = append(b, s.RV, s.Rsvd, byte(s.Opcode))
	for _, v := range [...]uint64{uint64(s.InvalSTag), uint64(s.Read.SinkSTag), s.Read.SinkTO, uint64(s.Read.Size),
		uint64(s.Read.SrcSTag), s.Read.SrcTO, s.Immediate} {
		b = binary.AppendUvarint(b, v)
	}
	b = binary.AppendVarint(b, int64(s.HdrLen))
	b = binary.AppendVarint(b, int64(f.PayloadLen))
	b = binary.AppendUvarint(b, uint64(len(f.Preview)))
	b = append(b, f.Preview...)
	return binary.AppendUvarint(b, f.TermFrame)
}

// readHeld reads what appendHeld wrote into box, which must be empty
// (newBox), and returns its record; after octets cut short or damaged it
// returns what it read and varpack.ErrCut.
func readHeld(p []byte, box *fpduBox) (*Record, error) {
	rd := varpack.Reader{B: p}
	r, f := &box.r, &box.f
	r.Type, r.box, r.FPDU = RecFPDU, boxFPDU, f
	fl := rd.Uvarint()
	r.Frame = rd.Uvarint()
	if fl&heldZeroTS == 0 {
		sec := rd.Varint()
		ns := rd.Uvarint()
		if ns >= 1e9 {
			rd.Fail()
		}
		r.TS = time.Unix(sec, int64(ns)).UTC()
	}
	r.Conn = rd.Int()
	r.Src, r.Dst = rd.AddrPort(), rd.AddrPort()
	r.Dir = Dir(rd.Bytes(1)[0])
	r.order = rd.Uvarint()
	r.pkt = uint32(rd.Uvarint())
	r.flushed = fl&heldFlushed != 0

	f.Seq = uint32(rd.Uvarint())
	f.Off = rd.Uvarint()
	f.Len = rd.Int()
	n := rd.Uvarint()
	if fl&heldFrames != 0 {
		f.Frames = box.frames[:0]
	}
	for i := uint64(0); i < n && rd.Err == nil; i++ {
		f.Frames = append(f.Frames, rd.Uvarint())
	}
	f.ULPDULen = rd.Uint16()
	f.Pad = rd.Int()
	n = rd.Uvarint()
	if fl&heldMarkers != 0 {
		f.Markers = box.markers[:0]
	}
	for i := uint64(0); i < n && rd.Err == nil; i++ {
		m := Marker{Seq: uint32(rd.Uvarint()), FPDUPtr: rd.Uint16(), Rsvd: rd.Uint16()}
		m.OK = rd.Bytes(1)[0] == 1
		f.Markers = append(f.Markers, m)
	}
	f.CRC = binary.LittleEndian.Uint32(rd.Bytes(4))
	hb := rd.Bytes(4)
	h := &f.Seg.DDP
	f.CRCStatus, h.Rsvd, h.DV, h.ULPCtrl = CRCStatus(hb[0]), hb[1], hb[2], hb[3]
	h.T, h.L, f.CRCCut = fl&heldT != 0, fl&heldL != 0, fl&heldCRCCut != 0
	h.STag = uint32(rd.Uvarint())
	h.TO = rd.Uvarint()
	h.ULPRsvd, h.QN, h.MSN, h.MO = uint32(rd.Uvarint()), uint32(rd.Uvarint()), uint32(rd.Uvarint()), uint32(rd.Uvarint())
	s := &f.Seg
	sb := rd.Bytes(3)
	s.RV, s.Rsvd, s.Opcode = sb[0], sb[1], rdmap.Opcode(sb[2])
	s.InvalSTag = uint32(rd.Uvarint())
	s.Read.SinkSTag, s.Read.SinkTO = uint32(rd.Uvarint()), rd.Uvarint()
	s.Read.Size, s.Read.SrcSTag, s.Read.SrcTO = uint32(rd.Uvarint()), uint32(rd.Uvarint()), rd.Uvarint()
	s.Immediate = rd.Uvarint()
	s.HdrLen = rd.Int()
	f.SegOK = fl&heldSegOK != 0
	f.PayloadLen = rd.Int()
	n = rd.Uvarint()
	if n > PreviewLen {
		rd.Fail()
		n = 0
	}
	if fl&heldPreview != 0 {
		f.Preview = f.previewBuf[:copy(f.previewBuf[:], rd.Bytes(int(n)))]
	}
	f.TermFrame = rd.Uvarint()
	return r, rd.Err
}

// pack packs r if it can, gives its box to drop and returns where it is.
func (h *heldPack) pack(r *Record) (ref uint64, ok bool) {
	if !canHold(r) {
		return 0, false
	}
	h.enc = appendHeld(h.enc[:0], r)
	if len(h.enc) > heldBlockSize/4 {
		return 0, false // an FPDU of thousands of frames
	}
	if h.cur < 0 || len(h.blocks[h.cur].b)+len(h.enc) > heldBlockSize {
		if h.cur = h.newBlock(); h.cur < 0 {
			return 0, false
		}
	}
	bl := &h.blocks[h.cur]
	ref = uint64(h.cur)<<32 | uint64(len(bl.b))
	bl.b = append(bl.b, h.enc...)
	bl.live++
	heldPacked.Add(1)
	h.drop((*fpduBox)(unsafe.Pointer(r)))
	return ref, true
}

// newBlock returns the index of an empty block, or -1 when heldMaxBlocks
// are in use.
func (h *heldPack) newBlock() int {
	if h.inUse >= heldMaxBlocks {
		return -1
	}
	h.inUse++
	var b []byte
	if n := len(h.spare); n > 0 {
		b, h.spare = h.spare[n-1], h.spare[:n-1]
	} else {
		b = make([]byte, 0, heldBlockSize)
	}
	if n := len(h.freeID); n > 0 {
		id := h.freeID[n-1]
		h.freeID = h.freeID[:n-1]
		h.blocks[id] = heldBlock{b: b}
		return id
	}
	h.blocks = append(h.blocks, heldBlock{b: b})
	return len(h.blocks) - 1
}

// unpack returns the record packed at ref, in a box from newBox; a block
// whose records have all been unpacked is emptied.
func (h *heldPack) unpack(ref uint64) *Record {
	id, off := int(ref>>32), int(uint32(ref))
	bl := &h.blocks[id]
	r, _ := readHeld(bl.b[off:], h.newBox())
	if bl.live--; bl.live == 0 {
		if id == h.cur {
			bl.b = bl.b[:0]
		} else {
			if len(h.spare) < 2 {
				h.spare = append(h.spare, bl.b[:0])
			}
			*bl = heldBlock{}
			h.freeID = append(h.freeID, id)
			h.inUse--
		}
	}
	return r
}
