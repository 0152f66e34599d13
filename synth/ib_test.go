package synth_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/iwarpkit/iwarpkit/capture"
	"github.com/iwarpkit/iwarpkit/internal/testutil"
)

// userDLT rewrites the link type of a pcap file to LINKTYPE_USER0 (147).
// tshark 4.0 does not read pcap files of LINKTYPE_INFINIBAND (247): "pcap:
// network type 247 unknown or unsupported"; its InfiniBand dissector is
// reached through a user DLT mapped to "infiniband" instead
// (tsharkUserDLT).
func userDLT(t *testing.T, pcap []byte) []byte {
	t.Helper()
	b := bytes.Clone(pcap)
	if len(b) < 24 {
		t.Fatal("short pcap")
	}
	order := binary.ByteOrder(binary.LittleEndian)
	if binary.BigEndian.Uint32(b) == 0xa1b2c3d4 || binary.BigEndian.Uint32(b) == 0xa1b23c4d {
		order = binary.BigEndian
	}
	if lt := order.Uint32(b[20:24]); lt != 247 {
		t.Fatalf("link type %d, want 247 (LINKTYPE_INFINIBAND)", lt)
	}
	order.PutUint32(b[20:24], 147)
	return b
}

var tsharkUserDLT = []string{"-o", `uat:user_dlts:"User 0 (DLT=147)","infiniband","0","","0",""`}

// ibFrames returns the frames of a capture, in order.
func ibFrames(t *testing.T, pcap []byte) [][]byte {
	t.Helper()
	src, err := capture.NewSource(bytes.NewReader(pcap), "ib")
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for {
		p, err := src.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if p.Kind != capture.KindIB {
			t.Fatalf("frame %d: kind %v, want IB", p.Frame, p.Kind)
		}
		out = append(out, bytes.Clone(p.Data))
	}
}

// TestIBNativeTshark has Wireshark's InfiniBand dissector decode the native
// InfiniBand capture (scenario ib-cm-native) and compares, frame by frame,
// what it reads with the ground truth and with our decode: the LRH's LIDs,
// the GRH's GIDs (or their absence), the MAD attribute and transaction ID,
// the communication IDs, QPNs, the REQ's primary path LIDs, the IP CM
// source port, the REJ reason, the BTH of the RC data packets, and where
// the ICRC and VCRC sit (tshark 4.0 shows both fields but verifies
// neither; our decoder reads the ICRC least significant octet first).
func TestIBNativeTshark(t *testing.T) {
	tshark := testutil.RequireTshark(t)
	attr := map[string]string{"req": "0x0010", "mra": "0x0011", "rej": "0x0012", "rep": "0x0013", "rtu": "0x0014",
		"dreq": "0x0015", "drep": "0x0016", "sidr_req": "0x0017", "sidr_rep": "0x0018"}
	for _, seed := range []int64{1, 3} {
		pcap, truth := genExt(t, "ib-cm-native", seed)
		cols := tsharkColumns(t, tshark, userDLT(t, pcap), tsharkUserDLT,
			"infiniband.lrh.slid", "infiniband.lrh.dlid", "infiniband.grh.sgid", "infiniband.grh.dgid", // 0-3
			"infiniband.mad.attributeid", "infiniband.mad.transactionid", // 4-5
			"infiniband.cm.req", "infiniband.cm.req.localqpn", "infiniband.cm.req.prim_locallid", // 6-8
			"infiniband.cm.req.prim_remotelid", "infiniband.cm.req.ip_cm.sport", // 9-10
			"infiniband.cm.rep.localqpn", "infiniband.cm.rep.remotecommid", // 11-12
			"infiniband.cm.rej.reason", "infiniband.cm.rej.remotecommid", // 13-14
			"infiniband.bth.opcode", "infiniband.bth.destqp", // 15-16
			"infiniband.invariant.crc", "infiniband.variant.crc") // 17-18
		frames := ibFrames(t, pcap)
		if len(cols) != len(frames) {
			t.Fatalf("seed %d: tshark read %d frames, the capture has %d", seed, len(cols), len(frames))
		}
		decoded := map[string]map[string]any{}
		for _, r := range decodeJSON(t, pcap) {
			if r["type"] == "cm" {
				decoded[fmt.Sprint(r["frame"])] = r
			}
		}
		fields, cm, data := 0, 0, 0
		check := func(frame any, what, got, want string) {
			t.Helper()
			fields++
			if got != want {
				t.Errorf("seed %d frame %v %s: tshark %q, want %q", seed, frame, what, got, want)
			}
		}
		// Every frame: the ICRC and VCRC where tshark finds them.
		for i, f := range frames {
			c := cols[fmt.Sprint(i+1)]
			n := len(f)
			check(i+1, "invariant crc", c[17], fmt.Sprintf("0x%08x", binary.BigEndian.Uint32(f[n-6:n-2])))
			check(i+1, "variant crc", c[18], fmt.Sprintf("0x%04x", binary.BigEndian.Uint16(f[n-2:])))
			if r, ok := decoded[fmt.Sprint(i+1)]; ok {
				icrc, _ := r["icrc"].(json.Number).Int64()
				check(i+1, "icrc (ours, read LSB first)", fmt.Sprintf("0x%08x", binary.LittleEndian.Uint32(f[n-6:n-2])), fmt.Sprintf("0x%08x", icrc))
			}
		}
		var wantData uint64
		for _, r := range truthRecords(t, truth) {
			num := func(k string) uint64 { n, _ := r[k].(json.Number).Int64(); return uint64(n) }
			switch r["type"] {
			case "conn":
				wantData += num("data_packets")
				continue
			case "cm":
			default:
				continue
			}
			cm++
			fr := r["frame"]
			c := cols[fmt.Sprint(fr)]
			check(fr, "slid", c[0], fmt.Sprint(num("slid")))
			check(fr, "dlid", c[1], fmt.Sprint(num("dlid")))
			gid := func(k string) string {
				if s, ok := r[k].(string); ok {
					return s
				}
				return "" // null: no GRH
			}
			check(fr, "sgid", c[2], gid("src"))
			check(fr, "dgid", c[3], gid("dst"))
			msg := fmt.Sprint(r["msg"])
			check(fr, "attribute", c[4], attr[msg])
			check(fr, "transaction id", c[5], fmt.Sprintf("0x%016x", num("transaction_id")))
			switch msg {
			case "req":
				check(fr, "local comm id", c[6], fmt.Sprintf("0x%08x", num("local_comm_id")))
				check(fr, "local qpn", c[7], fmt.Sprintf("0x%06x", num("qpn")))
				check(fr, "primary local lid", c[8], fmt.Sprint(num("slid")))
				check(fr, "primary remote lid", c[9], fmt.Sprint(num("dlid")))
				ipcm := r["ip_cm"].(map[string]any)
				port, _ := ipcm["port"].(json.Number).Int64()
				check(fr, "ip cm port", c[10], fmt.Sprintf("0x%04x", port))
			case "rep":
				check(fr, "local qpn", c[11], fmt.Sprintf("0x%06x", num("qpn")))
				check(fr, "remote comm id", c[12], fmt.Sprintf("0x%08x", num("remote_comm_id")))
			case "rej":
				check(fr, "reason", c[13], fmt.Sprintf("0x%04x", num("reason")))
				check(fr, "remote comm id", c[14], fmt.Sprintf("0x%08x", num("remote_comm_id")))
			}
		}
		// The RC data packets: SEND Only (opcode 4) to the QPs the REQ and
		// REP named.
		for _, c := range cols {
			if c[15] == "4" {
				data++
				if c[16] == "" || c[4] != "" {
					t.Errorf("seed %d: RC packet with QP %q, attribute %q", seed, c[16], c[4])
				}
			}
		}
		if uint64(data) != wantData || cm == 0 {
			t.Errorf("seed %d: tshark sees %d RC data packets (truth %d), %d CM messages", seed, data, wantData, cm)
		}
		t.Logf("seed %d: tshark agrees on %d fields over %d frames (%d CM messages, %d RC data packets)", seed, fields, len(frames), cm, data)
	}
}
