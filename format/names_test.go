package format

import (
	"encoding/xml"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/iwarpkit/iwarpkit/dissect/rdmap"
	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/internal/testutil"
)

// pdmlField is a field of tshark's PDML with the fields nested in it.
type pdmlField struct {
	Name     string      `xml:"name,attr"`
	Showname string      `xml:"showname,attr"`
	Fields   []pdmlField `xml:"field"`
}

type pdmlProto struct {
	Name   string      `xml:"name,attr"`
	Fields []pdmlField `xml:"field"`
}

type pdmlPacket struct {
	Protos []pdmlProto `xml:"proto"`
}

// tsharkNames returns, by frame, the value name tshark's tree gives each
// iWARP field of a name in want ("OpCode: Send (0x3)" gives "Send"), in the
// order of the frame's FPDUs.
func tsharkNames(t *testing.T, tshark, file string, want map[string]bool) map[uint64][]map[string]string {
	t.Helper()
	out, err := exec.Command(tshark, "-r", file, "-T", "pdml", "-Y", "iwarp_ddp_rdmap").Output()
	if err != nil {
		t.Fatalf("tshark -T pdml %s: %v", file, err)
	}
	var doc struct {
		Packets []pdmlPacket `xml:"packet"`
	}
	if err := xml.Unmarshal(out, &doc); err != nil {
		t.Fatalf("%s: tshark's PDML: %v", file, err)
	}
	named := regexp.MustCompile(`: (.+) \((0x[0-9a-fA-F]+|[0-9]+)\)$`)
	frameNo := regexp.MustCompile(`Frame Number: ([0-9]+)`)
	res := map[uint64][]map[string]string{}
	for _, p := range doc.Packets {
		var frame uint64
		var fpdus []map[string]string
		var walk func(fs []pdmlField, m map[string]string)
		walk = func(fs []pdmlField, m map[string]string) {
			for _, f := range fs {
				if want[f.Name] {
					if g := named.FindStringSubmatch(f.Showname); g != nil {
						m[f.Name] = g[1]
					}
				}
				walk(f.Fields, m)
			}
		}
		for _, pr := range p.Protos {
			switch pr.Name {
			case "frame":
				for _, f := range pr.Fields {
					if g := frameNo.FindStringSubmatch(f.Showname); g != nil {
						frame, _ = strconv.ParseUint(g[1], 10, 64)
					}
				}
			case "iwarp_ddp_rdmap":
				m := map[string]string{}
				walk(pr.Fields, m)
				fpdus = append(fpdus, m)
			}
		}
		res[frame] = fpdus
	}
	return res
}

// TestValueNamesAsTshark: the names the field tree gives opcodes and a
// Terminate's layer, error type and code are the names in tshark's tree of
// the same FPDUs, on the bundled captures that hold every opcode and
// Terminate layer. Terminates in Linux siw's
// layout are left out: tshark reads their control word in the RFC's
// layout, with Layer and EType swapped.
func TestValueNamesAsTshark(t *testing.T) {
	tshark := testutil.RequireTshark(t)
	// Every opcode and Terminate layer the bundled captures hold: siw's
	// Terminates and operations, synth's RFC-layout Terminates and RFC
	// 7306 (tshark's PDML of all 40 captures took 20 s under -race).
	var files []string
	for _, g := range []string{"siw/term_*.pcap", "siw/crc_v2_iwtest_ops.pcap", "siw/basic_ib_read_bw_*.pcap", "siw/p2p_rtr*.pcap", "synth/terminate-*.pcap", "synth/rfc7306.pcap"} {
		m, _ := filepath.Glob("../testdata/" + g)
		files = append(files, m...)
	}
	if len(files) < 10 {
		t.Fatalf("only %d captures", len(files))
	}
	want := map[string]bool{
		"iwarp_rdma.opcode": true, "iwarp_rdma.term_layer": true,
		"iwarp_rdma.term_etype_rdma": true, "iwarp_rdma.term_etype_ddp": true, "iwarp_rdma.term_etype_llp": true,
		"iwarp_rdma.term_errcode_rdma": true, "iwarp_rdma.term_errcode_ddp_tagged": true,
		"iwarp_rdma.term_errcode_ddp_untagged": true, "iwarp_rdma.term_errcode_llp": true,
	}
	// Where tshark's names say the same in other words, or where tshark
	// 4.0 has no name: the RFC's names are kept ("RDMA Write", RFC 5040
	// §4.1 Figure 4; Layer "RDMAP", §4.8 Figure 9); RFC 7306's opcodes are
	// unknown to it. Case is not compared.
	same := map[[2]string]bool{
		{"RDMA Write", "Write"}: true, {"RDMA Read Request", "Read Request"}: true,
		{"RDMA Read Response", "Read Response"}: true, {"RDMAP", "RDMA"}: true,
		{"Immediate Data", "Unknown"}: true, {"Immediate Data with SE", "Unknown"}: true,
		{"Atomic Request", "Unknown"}: true, {"Atomic Response", "Unknown"}: true,
	}
	opcodes, terms := 0, 0
	for _, f := range files {
		recs := testutil.Decode(t, f, flows.Options{})
		var ts map[uint64][]map[string]string
		for _, r := range recs {
			if r.Type != flows.RecFPDU || !r.FPDU.SegOK || len(r.FPDU.Frames) != 1 {
				continue
			}
			if ts == nil {
				ts = tsharkNames(t, tshark, f, want)
			}
			theirs := ts[r.Frame]
			if len(theirs) != 1 {
				continue // several FPDUs in the frame, or none tshark decodes
			}
			th := theirs[0]
			seg := &r.FPDU.Seg
			check := func(field, ours, tsharkField string) {
				t.Helper()
				got, ok := th[tsharkField]
				if !ok {
					t.Errorf("%s frame %d: tshark gives no %s", f, r.Frame, tsharkField)
					return
				}
				if !strings.EqualFold(ours, got) && !same[[2]string{ours, got}] {
					t.Errorf("%s frame %d: %s is %q, tshark says %q", f, r.Frame, field, ours, got)
				}
			}
			check("rdmap.opcode", ValueName("rdmap.opcode", uint64(seg.Opcode), nil), "iwarp_rdma.opcode")
			opcodes++
			if seg.Opcode != rdmap.OpTerminate || seg.Term.SiwLayout {
				continue
			}
			tm := seg.Term
			sib := []KV{kvu("layer", uint64(tm.Layer)), kvu("etype", uint64(tm.EType)), kvu("code", uint64(tm.Code))}
			check("rdmap.term.layer", ValueName("rdmap.term.layer", uint64(tm.Layer), sib), "iwarp_rdma.term_layer")
			var et, ec string
			switch rdmap.TermLayer(tm.Layer) {
			case rdmap.LayerRDMAP:
				et, ec = "iwarp_rdma.term_etype_rdma", "iwarp_rdma.term_errcode_rdma"
			case rdmap.LayerDDP:
				et, ec = "iwarp_rdma.term_etype_ddp", "iwarp_rdma.term_errcode_ddp_tagged"
				if tm.EType == rdmap.ETypeDDPUntagged {
					ec = "iwarp_rdma.term_errcode_ddp_untagged"
				}
			case rdmap.LayerLLP:
				et, ec = "iwarp_rdma.term_etype_llp", "iwarp_rdma.term_errcode_llp"
			default:
				continue
			}
			check("rdmap.term.etype", ValueName("rdmap.term.etype", uint64(tm.EType), sib), et)
			if code := ValueName("rdmap.term.code", uint64(tm.Code), sib); code != "" {
				if _, ok := th[ec]; ok {
					check("rdmap.term.code", code, ec)
				}
			}
			terms++
		}
	}
	t.Logf("%d opcodes and %d Terminates named as tshark names them", opcodes, terms)
	if opcodes < 100 || terms < 3 {
		t.Fatalf("only %d opcodes and %d Terminates compared", opcodes, terms)
	}
}

// TestAppendNumber: numbers of the tree, hex to the width the registry
// gives the field (the width tshark -G fields gives it, TestHexBitsAsTshark),
// and the names the RFCs give values (RFC 5040 Figure 4 and §5.1, RFC 5041
// §7.2, RFC 5044 §7.1 and §8).
func TestAppendNumber(t *testing.T) {
	term := []KV{kvu("layer", 1), kvu("etype", 1), kvu("code", 0)}
	untagged := []KV{kvu("layer", 1), kvu("etype", 2), kvu("code", 1)}
	for _, c := range []struct {
		path string
		v    uint64
		sib  []KV
		want string
	}{
		{"ddp.stag", 0x7bf1600, nil, "0x07bf1600"},
		{"rdmap.term.ddp.stag", 0x7bf1600, nil, "0x07bf1600"},
		{"rdmap.term.ddp.to", 0x7fe0b8347000, nil, "0x00007fe0b8347000"},
		{"mpa.crc", 0, nil, "0x00000000"},
		{"qpn", 0x11, nil, "0x000011"},
		{"mystery.stag", 1, nil, "0x00000001"},
		{"ddp.msn", 1, nil, "1"},
		{"rdmap.opcode", 3, nil, "3 (Send)"},
		{"rdmap.opcode", 6, nil, "6 (Send with SE and Invalidate)"},
		{"rdmap.term.rdmap.opcode", 1, nil, "1 (RDMA Read Request)"},
		{"rdmap.opcode", 12, nil, "12 (Reserved (0xC))"},
		{"rdmap.opcode", 16, nil, "16"},
		{"ddp.qn", 1, nil, "1 (RDMA Read Request queue)"},
		{"ddp.qn", 7, nil, "7"},
		{"rdmap.term.layer", 2, nil, "2 (LLP)"},
		{"rdmap.term.etype", 1, term, "1 (Tagged Buffer Error)"},
		{"rdmap.term.code", 0, term, "0 (Invalid STag)"},
		{"rdmap.term.code", 1, untagged, "1 (Invalid QN)"},
		{"rdmap.term.etype", 1, nil, "1"},
		{"rev", 1, nil, "1 (RFC 5044)"},
		{"mpa.rev", 0, nil, "0 (RDMAC)"},
		{"rev", 3, nil, "3"},
		{"ddp.dv", 1, nil, "1 (IETF)"},
		{"ddp_version", 0, nil, "0 (RDMAC)"},
		{"sctp.ppid", 16, nil, "16 (DDP Segment)"},
		{"path_mtu", 3, nil, "3 (1024 octets)"},
		{"path_mtu", 6, nil, "6"},
	} {
		if got := string(AppendNumber(nil, c.path, c.v, c.sib)); got != c.want {
			t.Errorf("AppendNumber(%s, %d) = %q, want %q", c.path, c.v, got, c.want)
		}
	}
}
