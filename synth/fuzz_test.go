package synth

import (
	"bytes"
	"errors"
	"net/netip"
	"testing"

	"github.com/iwarpkit/iwarpkit/dissect/mpa"
)

// scenarioFromBytes builds a one-connection scenario from fuzz input: every
// octet picks a parameter, so the fuzzer explores MSS, segmentation,
// markers, CRC, grid origin, operations and impairments.
func scenarioFromBytes(seed int64, b []byte) Scenario {
	next := func() int {
		if len(b) == 0 {
			return 0
		}
		v := int(b[0])
		b = b[1:]
		return v
	}
	c := Conn{
		Initiator: netip.MustParseAddrPort("192.0.2.2:40000"),
		Responder: netip.MustParseAddrPort("192.0.2.1:7174"),
		Handshake: next()&1 == 0,
		MSS:       64 + next()*6,
		ISNI:      uint32(next()) * 0x01010101,
		ISNR:      0xFFFFFFFF - uint32(next())*16,
	}
	flags := next()
	if flags&0x80 == 0 {
		rev := uint8(flags & 3)
		c.MPA = &MPAParams{
			Request: MPAFrame{Rev: rev, M: flags&4 != 0, C: flags&8 != 0, PD: make([]byte, next()%7)},
			Reply:   MPAFrame{Rev: rev, M: flags&16 != 0, C: flags&32 != 0, PD: make([]byte, next()%5)},
		}
		if rev == 2 {
			c.MPA.Request.Enhanced = &mpa.Enhanced{IRD: 1, ORD: 1}
			c.MPA.Reply.Enhanced = &mpa.Enhanced{IRD: 1, ORD: 1}
		}
	}
	if flags&0x40 != 0 {
		c.Origin = OriginStreamStart
	}
	c.Segmentation = Segmentation(next() % 3)
	for d := range 2 {
		for range next() % 12 {
			c.ExactSegments[d] = append(c.ExactSegments[d], 1+next()%40)
		}
	}
	c.MaxULPDU = next() * 8
	c.AckEvery = next()%4 - 1
	for range next() % 10 {
		k := OpKind(next() % int(RawULPDU+1))
		op := Op{Dir: Dir(next() & 1), Kind: k, Size: next() * (1 + next()%20), STag: uint32(next()), TO: uint64(next()) << 30}
		if k == RawULPDU {
			op.Payload = make([]byte, next())
		}
		c.Ops = append(c.Ops, op)
	}
	im := next()
	ref := func() SegRef { return SegRef{Dir(next() & 1), next() % 8} }
	if im&1 != 0 {
		c.Impair.Drop = []SegRef{ref()}
	}
	if im&2 != 0 {
		c.Impair.Duplicate = []SegRef{ref()}
	}
	if im&4 != 0 {
		c.Impair.Conflict = []SegRef{ref()}
	}
	if im&8 != 0 {
		c.Impair.Reorder = []SegRef{ref()}
	}
	if im&16 != 0 {
		c.Impair.CorruptCRC = []FPDURef{{Dir(next() & 1), next() % 8}}
	}
	if im&32 != 0 {
		c.Impair.StartAt = &StartAt{Frame: next() % 10}
	}
	if im&64 != 0 {
		c.Impair.ReverseCRC = []FPDURef{{Dir(next() & 1), next() % 8}}
	}
	c.Close = Close{Kind: CloseKind(next() % 3), By: Dir(next() & 1)}
	s := Scenario{Seed: seed, Conns: []Conn{c}, LinkType: LinkType(next() % 3)}
	if next()&1 != 0 {
		s.Snaplen = 60 + next()*4
	}
	return s
}

// FuzzScenario generates random scenarios and runs the independent checker
// on each: whatever the parameters, the truth must match the capture.
func FuzzScenario(f *testing.F) {
	f.Add(int64(1), []byte{})
	f.Add(int64(2), []byte{0, 200, 1, 2, 0x1C, 3, 3, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0, 3, 4, 5, 6, 7, 8})
	f.Add(int64(3), []byte{1, 100, 255, 255, 0x80, 2, 0, 0, 10, 2, 5, 4, 0, 9, 3, 1, 0, 200, 5, 1, 0, 50, 2, 0x3F, 1, 2, 1, 3, 0, 1, 2})
	f.Add(int64(4), []byte{0, 30, 7, 7, 0x56, 1, 1, 1, 5, 3, 0, 7, 7, 7, 7, 7, 5, 0, 4, 0, 80, 1, 9, 1, 100, 255, 9})
	f.Fuzz(func(t *testing.T, seed int64, cfg []byte) {
		s := scenarioFromBytes(seed, cfg)
		var p, tr bytes.Buffer
		_, err := Generate(s, &p, &tr)
		switch {
		case err == nil:
		case errors.Is(err, ErrBadImpair), errors.Is(err, ErrOpsRejected), errors.Is(err, ErrULPDUTooLong), errors.Is(err, ErrBadOp):
			return
		default:
			t.Fatalf("Generate: %v", err)
		}
		checkCapture(t, p.Bytes(), tr.Bytes())
		var p2, tr2 bytes.Buffer
		if _, err := Generate(s, &p2, &tr2); err != nil || !bytes.Equal(p.Bytes(), p2.Bytes()) || !bytes.Equal(tr.Bytes(), tr2.Bytes()) {
			t.Fatal("not deterministic")
		}
	})
}
