package flows_test

import (
	"bytes"
	"encoding/binary"
	"net/netip"
	"testing"

	"github.com/iwarpkit/iwarpkit/dissect/ibcm"
	"github.com/iwarpkit/iwarpkit/flows"
)

// roceCMFrame builds an Ethernet/IPv4/UDP frame carrying the CM message m
// over RoCEv2 from src to dst (UDP port 4791), its ICRC computed.
func roceCMFrame(src, dst netip.Addr, m ibcm.Message) []byte {
	pk := ibcm.NewCMPacket(1, 0x42, m)
	payload := ibcm.AppendRoCE(nil, &pk)
	udp := make([]byte, 8, 8+len(payload))
	binary.BigEndian.PutUint16(udp[0:], 0xC001)
	binary.BigEndian.PutUint16(udp[2:], ibcm.UDPPort)
	binary.BigEndian.PutUint16(udp[4:], uint16(8+len(payload)))
	udp = append(udp, payload...)
	ip := ipv4Header(17, src.AsSlice(), dst.AsSlice(), len(udp))
	binary.LittleEndian.PutUint32(udp[len(udp)-4:], ibcm.ICRCv2(ip, udp))
	f := make([]byte, 14, 14+len(ip)+len(udp))
	f[12], f[13] = 0x08, 0x00
	return append(append(f, ip...), udp...)
}

// TestCMRejectOfREP: a REJ names the message it rejects (IBA §12.6.7
// Table 108: 0 REQ, 1 REP, 2 no message). One of a REP is the initiator's:
// its local communication ID is the initiator's own, not the responder's
// (the summary took it for the responder's, overwriting the REP's), and
// when it is the first message captured its sender is the initiator (it
// was taken for the responder, as for a REJ of a REQ). An MRA names the
// message it acknowledges the same way (IBA §12.6.6 Table 107), and an RTU
// comes from the initiator.
func TestCMRejectOfREP(t *testing.T) {
	ini, resp := netip.MustParseAddr("198.51.100.2"), netip.MustParseAddr("198.51.100.1")
	req := ibcm.Message{Type: ibcm.MsgREQ}
	req.REQ.LocalCommID, req.REQ.ServiceID, req.REQ.LocalQPN = 0x100, ibcm.MakeServiceID(ibcm.PortSpaceTCP, 4420), 0x11
	rep := ibcm.Message{Type: ibcm.MsgREP}
	rep.REP.LocalCommID, rep.REP.RemoteCommID, rep.REP.LocalQPN = 0x200, 0x100, 0x12
	rejREP := ibcm.Message{Type: ibcm.MsgREJ}
	rejREP.REJ.LocalCommID, rejREP.REJ.RemoteCommID = 0x100, 0x200
	rejREP.REJ.MessageRejected, rejREP.REJ.Reason = 1, ibcm.RejInsufficientRespRes
	rejREQ := ibcm.Message{Type: ibcm.MsgREJ}
	rejREQ.REJ.LocalCommID, rejREQ.REJ.RemoteCommID, rejREQ.REJ.Reason = 0x200, 0x100, ibcm.RejConsumerDefined
	rejOther := rejREP
	rejOther.REJ.MessageRejected = 2
	mraREP := ibcm.Message{Type: ibcm.MsgMRA}
	mraREP.MRA.LocalCommID, mraREP.MRA.RemoteCommID, mraREP.MRA.MessageMRAed = 0x100, 0x200, 1
	rtu := ibcm.Message{Type: ibcm.MsgRTU}
	rtu.Comm = ibcm.CommIDs{LocalCommID: 0x100, RemoteCommID: 0x200}

	type msg struct {
		fromI bool
		m     ibcm.Message
	}
	cases := []struct {
		name          string
		msgs          []msg
		dirs          string
		known         bool
		local, remote uint32
	}{
		{"REQ REP REJ(REP)", []msg{{true, req}, {false, rep}, {true, rejREP}}, "i2r r2i i2r", true, 0x100, 0x200},
		{"REQ REJ(REQ)", []msg{{true, req}, {false, rejREQ}}, "i2r r2i", true, 0x100, 0x200},
		{"REJ(REP) alone", []msg{{true, rejREP}}, "i2r", true, 0x100, 0},
		{"REJ(REQ) alone", []msg{{false, rejREQ}}, "r2i", true, 0, 0x200},
		{"REJ(other) alone", []msg{{true, rejOther}}, "", false, 0, 0}, // DirUnknown
		{"MRA(REP) then REJ(REP)", []msg{{true, mraREP}, {true, rejREP}}, "i2r i2r", true, 0x100, 0},
		{"RTU alone", []msg{{true, rtu}}, "i2r", true, 0, 0},
	}
	for _, c := range cases {
		var pcap bytes.Buffer
		w := newPcap(&pcap)
		for _, m := range c.msgs {
			src, dst := ini, resp
			if !m.fromI {
				src, dst = resp, ini
			}
			w(roceCMFrame(src, dst, m.m))
		}
		var dirs string
		var sum *flows.CMSummary
		for _, r := range decodeReader(t, &pcap, flows.Options{}) {
			switch r.Type {
			case flows.RecCM:
				if dirs != "" {
					dirs += " "
				}
				dirs += r.Dir.String()
				if r.CM.ICRCStatus != flows.CRCOK {
					t.Errorf("%s frame %d: ICRC %v", c.name, r.Frame, r.CM.ICRCStatus)
				}
			case flows.RecExtConn:
				sum = r.CM.Summary
			}
		}
		if sum == nil {
			t.Fatalf("%s: no summary", c.name)
		}
		if dirs != c.dirs || sum.InitiatorKnown != c.known || sum.LocalCommID != c.local || sum.RemoteCommID != c.remote {
			t.Errorf("%s: dirs %q known %v comm IDs %#x/%#x; want %q %v %#x/%#x", c.name, dirs, sum.InitiatorKnown,
				sum.LocalCommID, sum.RemoteCommID, c.dirs, c.known, c.local, c.remote)
		}
		if c.known && (sum.Initiator != ini || sum.Responder != resp) {
			t.Errorf("%s: initiator %v responder %v", c.name, sum.Initiator, sum.Responder)
		}
	}
}

// ipv4Header returns a 20-octet IPv4 header (RFC 791) for a packet of
// proto carrying l4len octets from src to dst, its checksum set.
func ipv4Header(proto uint8, src, dst []byte, l4len int) []byte {
	ip := []byte{0x45, 0, 0, 0, 0, 1, 0x40, 0, 64, proto, 0, 0}
	binary.BigEndian.PutUint16(ip[2:], uint16(20+l4len))
	ip = append(append(ip, src...), dst...)
	var sum uint32
	for i := 0; i < 20; i += 2 {
		sum += uint32(binary.BigEndian.Uint16(ip[i:]))
	}
	for sum > 0xFFFF {
		sum = sum&0xFFFF + sum>>16
	}
	binary.BigEndian.PutUint16(ip[10:], ^uint16(sum))
	return ip
}
