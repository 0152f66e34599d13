package capture_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/iwarpkit/iwarpkit/capture"
	"github.com/iwarpkit/iwarpkit/dissect"
)

// ibFrame returns a native InfiniBand packet as LINKTYPE_INFINIBAND frames
// hold it: an 8-octet LRH (IBA Vol. 1 §7.7; VL 0, LVer 0, SL 0, LNH 2 = IBA
// local, DLID 1, PktLen, SLID 2) and n octets standing for the rest of the
// packet (the capture package looks no further than the LRH).
func ibFrame(n int) []byte {
	b := []byte{0x00, 0x02, 0x00, 0x01, 0, 0, 0x00, 0x02}
	binary.BigEndian.PutUint16(b[4:], uint16((8+n)/4)&0x07ff)
	return append(b, bytes.Repeat([]byte{0x5a}, n)...)
}

func TestInfiniBand(t *testing.T) {
	if capture.LinkTypeInfiniBand != 247 {
		t.Fatalf("LinkTypeInfiniBand = %d, want 247 (DLT_INFINIBAND)", capture.LinkTypeInfiniBand)
	}
	frame := ibFrame(306)
	check := func(t *testing.T, p capture.Packet, wire int) {
		t.Helper()
		if p.Kind != capture.KindIB || p.Err != nil {
			t.Fatalf("kind %v err %v, want IB", p.Kind, p.Err)
		}
		if !bytes.Equal(p.Payload, frame) || !bytes.Equal(p.Data, frame) || p.PayloadWireLen != wire {
			t.Errorf("payload %d octets (wire %d), want the whole %d-octet frame (wire %d)", len(p.Payload), p.PayloadWireLen, len(frame), wire)
		}
		if p.Src.IsValid() || p.Dst.IsValid() || p.IPv6 || p.Fragment || p.Flags != 0 {
			t.Errorf("src %v dst %v v6 %v frag %v flags %v: want no IP", p.Src, p.Dst, p.IPv6, p.Fragment, p.Flags)
		}
	}
	t.Run("pcap", func(t *testing.T) {
		check(t, readOne(t, capture.LinkTypeInfiniBand, frame), len(frame))
	})
	t.Run("pcapng", func(t *testing.T) {
		// An InfiniBand interface beside an Ethernet one.
		eth := ether(t, ipv4TCP(t, []byte("x")))
		f := newNgFile(binary.LittleEndian)
		f.idb(capture.LinkTypeInfiniBand, 0, 9)
		f.idb(1, 0, 9)
		f.epb(0, t0, 9, uint32(len(frame)), uint32(len(frame)+100), frame) // cut by the snap length
		f.epb(1, t0, 9, uint32(len(eth)), uint32(len(eth)), eth)
		pkts, err := readAll(t, f.bytes())
		if err != nil || len(pkts) != 2 {
			t.Fatalf("%d packets, %v", len(pkts), err)
		}
		check(t, pkts[0], len(frame)+100)
		if pkts[1].Kind != capture.KindTCP {
			t.Errorf("frame 2: kind %v", pkts[1].Kind)
		}
	})
	t.Run("short", func(t *testing.T) {
		for _, n := range []int{0, 1, 7} {
			p := readOne(t, capture.LinkTypeInfiniBand, frame[:n])
			var de *dissect.DecodeError
			if p.Kind != capture.KindBad || !errors.As(p.Err, &de) || !errors.Is(p.Err, dissect.ErrTruncated) ||
				de.Layer != dissect.LayerLink || de.Offset != 0 {
				t.Errorf("%d octets: kind %v err %v, want a truncated link header", n, p.Kind, p.Err)
			}
			if p.Payload != nil {
				t.Errorf("%d octets: payload on a bad frame", n)
			}
		}
		// The LRH alone is a (degenerate) packet: dissect/ibcm judges it.
		if p := readOne(t, capture.LinkTypeInfiniBand, frame[:8]); p.Kind != capture.KindIB || len(p.Payload) != 8 {
			t.Errorf("LRH only: kind %v, %d octets", p.Kind, len(p.Payload))
		}
	})
	if capture.KindIB.String() != "IB" {
		t.Errorf("KindIB.String() = %q", capture.KindIB.String())
	}
}
