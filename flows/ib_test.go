package flows_test

import (
	"bytes"
	"fmt"
	"net/netip"
	"reflect"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/iwarpkit/iwarpkit/capture"
	"github.com/iwarpkit/iwarpkit/dissect/ibcm"
	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/format"
	"github.com/iwarpkit/iwarpkit/internal/testutil"
)

// nativeFromRoCE rewrites a RoCEv2 capture as a native InfiniBand one
// (pcap LINKTYPE_INFINIBAND): each RoCEv2 UDP payload (BTH to ICRC) gets an
// LRH, LIDs numbered in order of the IP addresses' first appearance, a GRH
// with the IP addresses as GIDs when grh is set (RoCE's GIDs are the IP
// addresses, IPv4 ones ::ffff-mapped), and two octets of VCRC (zero: the
// decoder does not check it). Other frames are left out. It returns the
// file and the LID of every address.
func nativeFromRoCE(t *testing.T, path string, grh bool) ([]byte, map[netip.Addr]uint16) {
	t.Helper()
	var buf bytes.Buffer
	w := pcapgo.NewWriter(&buf)
	if err := w.WriteFileHeader(65535, capture.LinkTypeInfiniBand); err != nil {
		t.Fatal(err)
	}
	lids := map[netip.Addr]uint16{}
	lid := func(a netip.Addr) uint16 {
		if _, ok := lids[a]; !ok {
			lids[a] = uint16(len(lids) + 1)
		}
		return lids[a]
	}
	for _, p := range loadPackets(t, path) {
		if p.Kind != capture.KindUDP || p.Dst.Port() != ibcm.UDPPort {
			continue
		}
		src, dst := p.Src.Addr(), p.Dst.Addr()
		h := ibcm.LRH{LNH: ibcm.LNHIBALocal, SLID: lid(src), DLID: lid(dst)}
		n := ibcm.LRHLen + len(p.Payload)
		if grh {
			h.LNH = ibcm.LNHIBAGlobal
			n += ibcm.GRHLen
		}
		h.PktLen = uint16(n / 4)
		f := ibcm.AppendLRH(nil, h)
		if grh {
			f = ibcm.AppendGRH(f, ibcm.GRH{IPVer: 6, PayLen: uint16(len(p.Payload)), NxtHdr: 0x1B, HopLmt: 64,
				SGID: src.As16(), DGID: dst.As16()})
		}
		f = append(append(f, p.Payload...), 0, 0)
		ci := gopacket.CaptureInfo{Timestamp: p.TS, CaptureLength: len(f), Length: len(f)}
		if err := w.WritePacket(ci, f); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes(), lids
}

// ibJSON renders records as format.Fields maps without the keys that name
// frames, times, ends or the ICRC verdict (which differ between RoCEv2
// and native InfiniBand).
func ibJSON(recs []*flows.Record) []map[string]string {
	skip := map[string]bool{"frame": true, "ts": true, "first_frame": true, "last_frame": true, "src": true, "dst": true,
		"slid": true, "dlid": true, "icrc_status": true, "initiator": true, "responder": true,
		"initiator_lid": true, "responder_lid": true}
	var out []map[string]string
	for _, r := range recs {
		m := map[string]string{}
		for _, kv := range format.Fields(r) {
			if !skip[kv.Key] {
				m[kv.Key] = string(format.AppendJSON(nil, []format.KV{kv}))
			}
		}
		out = append(out, m)
	}
	return out
}

// TestIBNativeFromRxe: the real rxe CM exchanges (testdata/rxe, checked
// against MANIFEST.md and tshark in TestRxeCaptures and the ibcm tests),
// carried over native InfiniBand instead of RoCEv2, give the same cm and
// conn records: same messages, directions, communication IDs, service,
// QPNs, state, data packets and octets, findings; only the ends change
// (LIDs, and the GIDs of the GRH) and the ICRC is unchecked.
func TestIBNativeFromRxe(t *testing.T) {
	for _, path := range []string{"../testdata/rxe/rxe_v4_rping.pcap", "../testdata/rxe/rxe_v6_rej_app.pcap"} {
		roce := testutil.Decode(t, path, flows.Options{})
		for _, grh := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/grh=%v", path[len("../testdata/rxe/"):], grh), func(t *testing.T) {
				file, lids := nativeFromRoCE(t, path, grh)
				native := decodeReader(t, bytes.NewReader(file), flows.Options{})
				if got, want := ibJSON(native), ibJSON(roce); !reflect.DeepEqual(got, want) {
					t.Fatalf("native records differ from RoCEv2's:\n%v\nwant\n%v", got, want)
				}
				for i, r := range native {
					switch r.Type {
					case flows.RecCM:
						c, rr := r.CM, roce[i]
						wantS, wantD := lids[rr.Src.Addr()], lids[rr.Dst.Addr()]
						if !c.HasLRH || c.HasGRH != grh || c.LRH.SLID != wantS || c.LRH.DLID != wantD {
							t.Errorf("frame %d: LRH %v %+v GRH %v, want LIDs %d > %d", r.Frame, c.HasLRH, c.LRH, c.HasGRH, wantS, wantD)
						}
						if c.ICRCStatus != flows.CRCUnchecked {
							t.Errorf("frame %d: ICRC %v, want unchecked", r.Frame, c.ICRCStatus)
						}
						wantSrc, wantDst := netip.AddrPort{}, netip.AddrPort{}
						if grh {
							wantSrc = netip.AddrPortFrom(netip.AddrFrom16(rr.Src.Addr().As16()), 0)
							wantDst = netip.AddrPortFrom(netip.AddrFrom16(rr.Dst.Addr().As16()), 0)
						}
						if r.Src != wantSrc || r.Dst != wantDst {
							t.Errorf("frame %d: %v > %v, want %v > %v", r.Frame, r.Src, r.Dst, wantSrc, wantDst)
						}
					case flows.RecExtConn:
						s, rs := r.CM.Summary, roce[i].CM.Summary
						if !s.Native || s.InitiatorLID != lids[rs.Initiator] || s.ResponderLID != lids[rs.Responder] {
							t.Errorf("summary: native %v LIDs %d > %d, want %d > %d", s.Native, s.InitiatorLID, s.ResponderLID,
								lids[rs.Initiator], lids[rs.Responder])
						}
						if s.Initiator.IsValid() != grh || (grh && s.Initiator.Unmap() != rs.Initiator) {
							t.Errorf("summary: initiator %v, GRH %v (RoCEv2: %v)", s.Initiator, grh, rs.Initiator)
						}
					}
				}
			})
		}
	}
}

// ibPacket is a capture.Packet of kind KindIB holding b.
func ibPacket(frame uint64, b []byte) capture.Packet {
	return capture.Packet{Frame: frame, Kind: capture.KindIB, Payload: b, Data: b, CapLen: len(b), WireLen: len(b),
		PayloadWireLen: len(b)}
}

// TestIBNativePackets feeds hand-made native packets: what is not a CM MAD,
// or is cut short, gives no record; a MAD cut inside its ICRC gives an
// incomplete one; an exchange needs no GRH.
func TestIBNativePackets(t *testing.T) {
	rtu := ibcm.NewCMPacket(7, 0x1234, ibcm.Message{Type: ibcm.MsgRTU, Comm: ibcm.CommIDs{LocalCommID: 0x11, RemoteCommID: 0x22}})
	body := ibcm.AppendRoCE(nil, &rtu)
	frame := func(lnh uint8, body []byte, vcrc bool) []byte {
		f := ibcm.AppendLRH(nil, ibcm.LRH{LNH: lnh, DLID: 1, SLID: 2, PktLen: uint16((8 + len(body)) / 4)})
		if lnh == ibcm.LNHIBAGlobal {
			f = ibcm.AppendGRH(f, ibcm.GRH{IPVer: 6, PayLen: uint16(len(body)), NxtHdr: 0x1B})
		}
		f = append(f, body...)
		if vcrc {
			f = append(f, 0, 0)
		}
		return f
	}
	ud := ibcm.AppendBTH(nil, ibcm.BTH{OpCode: ibcm.OpUDSendOnly, PKey: 0xFFFF, DestQP: 5})
	ud = ibcm.AppendDETH(ud, ibcm.DETH{QKey: 0x1000, SrcQP: 9})
	ud = append(ud, make([]byte, 64)...)
	full := frame(ibcm.LNHIBALocal, body, true)
	for _, c := range []struct {
		name   string
		pkt    capture.Packet
		status string // "" for no record
	}{
		{"lrh-only", ibPacket(1, full[:8]), ""},
		{"raw", ibPacket(1, frame(ibcm.LNHRaw, body, true)), ""},
		{"ip-non-iba", ibPacket(1, frame(ibcm.LNHIPNonIBA, body, true)), ""},
		{"ud-not-gsi", ibPacket(1, frame(ibcm.LNHIBALocal, ud, true)), ""},
		{"grh-cut", ibPacket(1, frame(ibcm.LNHIBAGlobal, body, true)[:30]), ""},
		{"mad-cut", ibPacket(1, full[:8+12+8+20]), ""},
		{"icrc-cut", func() capture.Packet {
			p := ibPacket(1, full[:len(full)-4])
			p.WireLen, p.PayloadWireLen = len(full), len(full)
			return p
		}(), "incomplete"},
		{"no-vcrc", ibPacket(1, frame(ibcm.LNHIBALocal, body, false)), "unchecked"},
		{"local", ibPacket(1, full), "unchecked"},
		{"global", ibPacket(1, frame(ibcm.LNHIBAGlobal, body, true)), "unchecked"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var cms []*flows.Record
			d := flows.NewDecoder(flows.Options{}, func(r *flows.Record) {
				if r.Type == flows.RecCM {
					cms = append(cms, r)
				}
			})
			d.Packet(&c.pkt)
			d.Close()
			switch {
			case c.status == "" && len(cms) != 0:
				t.Errorf("%d cm records, want none", len(cms))
			case c.status != "" && len(cms) != 1:
				t.Errorf("%d cm records, want one", len(cms))
			case c.status != "":
				r := cms[0]
				// An RTU comes from the active side (IBA §12.6.9): its
				// sender is the initiator even with no REQ captured.
				if r.CM.ICRCStatus.String() != c.status || r.CM.Msg.Type != ibcm.MsgRTU || r.CM.LRH.SLID != 2 || r.CM.LRH.DLID != 1 ||
					r.Dir != flows.DirI2R {
					t.Errorf("record %+v, ICRC %v", r.CM.LRH, r.CM.ICRCStatus)
				}
			}
		})
	}
}

// TestIBNativeAndRoCE: one capture session holding the same exchange over
// RoCEv2 and over native InfiniBand keeps them apart (ends are IP
// addresses for the one, LIDs for the other) and numbers them in order.
func TestIBNativeAndRoCE(t *testing.T) {
	path := "../testdata/rxe/rxe_v4_rping.pcap"
	file, _ := nativeFromRoCE(t, path, false)
	ps := loadPackets(t, path)
	src, err := capture.NewSource(bytes.NewReader(file), "native")
	if err != nil {
		t.Fatal(err)
	}
	for {
		p, err := src.Next()
		if err != nil {
			break
		}
		p.Frame += uint64(len(ps))
		p.Payload = bytes.Clone(p.Payload)
		p.Data = p.Payload
		ps = append(ps, p)
	}
	var sums []*flows.CMSummary
	for _, r := range decodePackets(ps) {
		if r.Type == flows.RecExtConn && r.CM != nil {
			if r.Conn != len(sums) {
				t.Errorf("conn %d, want %d", r.Conn, len(sums))
			}
			sums = append(sums, r.CM.Summary)
		}
	}
	if len(sums) != 2 || sums[0].Native || !sums[1].Native || sums[0].Messages != 5 || sums[1].Messages != 5 ||
		sums[0].DataPackets != sums[1].DataPackets || sums[0].DataOctets != sums[1].DataOctets || sums[1].State != "closed" {
		for _, s := range sums {
			t.Logf("%+v", *s)
		}
		t.Fatalf("%d exchanges, want the RoCEv2 one and the native one alike", len(sums))
	}
}

// BenchmarkIBNative decodes the generated native InfiniBand sample (12
// packets: 8 CM MADs and 4 RC data packets) through the decoder.
func BenchmarkIBNative(b *testing.B) {
	ps := loadPackets(b, "../testdata/synthext/ib-cm-native.pcap")
	b.ReportAllocs()
	for b.Loop() {
		d := flows.NewDecoder(flows.Options{}, func(*flows.Record) {})
		for i := range ps {
			d.Packet(&ps[i])
		}
		d.Close()
	}
}
