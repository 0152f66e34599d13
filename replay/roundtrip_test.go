package replay

import (
	"cmp"
	"slices"
	"testing"
)

// TestRoundTripPcap replays generated and real captures with WritePcap and
// decodes the result: the same messages (opcode, length, payload digest,
// order per direction) must come out.
func TestRoundTripPcap(t *testing.T) {
	files := map[string]string{}
	for _, n := range []string{"rev1-crc", "rev1-nocrc", "rev2-enhanced", "rev2-p2p-write-rtr", "rev2-p2p-read-rtr",
		"rdmac", "rev0-interop", "markers-both", "markers-i2r", "markers-r2i", "marker-grid-end", "marker-multi",
		"marker-pad-crc", "tiny-segments", "mss-span", "ipv6", "retransmit-dup", "retransmit-conflict", "reorder",
		"crc-bad", "terminate-rdmap", "terminate-ddp", "terminate-llp", "terminate-siw", "reject", "no-reply", "multi-conn",
		"seq-wrap", "link-raw", "link-sll", "rfc7306"} {
		files["synth/"+n] = ""
	}
	for _, f := range []string{"crc_v2_iwtest_ops", "crc_v2_rping", "basic_rping_v2_nocrc", "nocrc_v1_rping",
		"p2p_rtr1_rping", "p2p_rtr2_rping", "reject_app_v2", "mpareq_rev3", "mpareq_markers", "basic_ib_send_bw_64_v2_nocrc",
		"gso_v2_nocrc_ib_write_bw_200000", "term_badwrite", "term_sendinv", "term_toolong"} {
		files["siw/"+f] = "../testdata/siw/" + f + ".pcap"
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			path := files[name]
			if path == "" {
				path = synthFile(t, name[len("synth/"):])
			}
			orig := load(t, path, LoadOptions{})
			out, rep := toPcap(t, orig, Options{})
			if !rep.OK() {
				t.Errorf("replay report not clean: %d mismatches, %d errors", rep.Mismatches, rep.Errors)
				for _, c := range rep.Conns {
					t.Logf("conn %d: %v %v", c.Conn, c.Mismatches, c.Err)
				}
			}
			again := load(t, out, LoadOptions{})
			if len(again) != len(orig) {
				t.Fatalf("%d connections replayed, %d decoded back", len(orig), len(again))
			}
			om, _, _ := decoderMessages(t, path)
			nm, _, _ := decoderMessages(t, out)
			for i := range orig {
				a, b := infos(orig[i], true), infos(again[i], true)
				for d := range a {
					if !slices.Equal(a[d], b[d]) {
						t.Errorf("conn %d %s: messages differ\n recorded %v\n replayed %v", orig[i].Conn, Dir(d), a[d], b[d])
					}
				}
				// The decoder's own message records agree as well (as
				// multisets: it emits them in the frame order of their
				// last segment, which a reordered capture changes).
				for d := range 2 {
					x, y := slices.Clone(om[orig[i].Conn][d]), slices.Clone(nm[again[i].Conn][d])
					slices.SortFunc(x, cmpFlowMsg)
					slices.SortFunc(y, cmpFlowMsg)
					if !slices.Equal(x, y) {
						t.Errorf("conn %d %s: decoder message records differ\n recorded %v\n replayed %v", orig[i].Conn, Dir(d), om[orig[i].Conn][d], nm[again[i].Conn][d])
					}
				}
			}
		})
	}
}

func cmpFlowMsg(a, b flowMsg) int {
	if a.Op != b.Op {
		return int(a.Op) - int(b.Op)
	}
	return cmp.Compare(a.Len, b.Len)
}
